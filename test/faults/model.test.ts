// R5: a model-based, differential random walk. fast-check drives random sequences of
// enter / position / state / token / admit / claim / consume / release / leave / stats /
// time passing against a MemoryStore-backed and a RedisStore-backed WaitingQueue side by
// side, and against a small model written from SPEC.md alone. After every step both stores
// must give the model's observable results, and the invariants (I2, I4, I8, no member both
// waiting and READY, waiting count) must hold.
//
// Time is deterministic. The model clock sits on a grid of U = 5 s steps. MemoryStore's
// injected clock starts at Redis TIME and moves only by those steps. On Redis a step is the
// test-only script of test/support/model-shift-clock.ts, which moves every stored timestamp
// of the queue back by the step (a server clock jump, RELIABILITY F19). Redis TIME also runs
// on in real time, so against the model every Redis "now minus stored time" is larger by
// ε ∈ [0, real time since the run began], never smaller (real time only moves forward).
// Every comparison in the scripts is "live iff deadline > now", so a model tie (deadline ==
// now: expired) is expired on Redis too, and a model gap of ≥ U stays a gap while ε < U.
// The bucket rate (0.02/s: 0.1 token per U) makes ε add < 0.0001 tokens, never a whole one,
// and keeps the configured rate below any observed rate, so wait estimates are exact.
// Each run checks ε < U/2, so a machine slow enough to break the premise fails loudly.
//
// Signed passes (SPEC §15): about half the runs (the run's config says which) give the Redis
// side `signing` with one Ed25519 key (deterministic signatures, so a pass is the same string
// each time it is read). Its tokens are then compact JWS passes whose `jti` is the store's
// token; claims verify them by wall clock, which the store's shifted clock never outruns, so
// every outcome is the model's. The MemoryStore side stays opaque: its clock runs ahead of
// wall time, where a pass would not be valid yet (MemoryStore with signing is in the
// contract suite).
//
// Replay a failure with MODEL_SEED, MODEL_PATH and MODEL_REPLAY_PATH (printed on failure).
// MODEL_RUNS overrides the number of runs.

import { createHash, randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { MIN_PACE_EVIDENCE, nextPace, stepOffer, type Pace } from '../../src/rates.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EntryTokenError, MemoryStore, RedisStore, WaitingQueue, type Claim, type MemberId, type Position } from '../../src/index.js';
import { queueKeys } from '../../src/store/keys.js';
import { redisNowMs, shiftClockKeys, shiftQueueClock, SHIFT_CLOCK_LUA } from '../support/model-shift-clock.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { COMPACT_JWS, signingWith } from '../support/signing-keys.js';

// ---------------------------------------------------------------------------------------
// Configuration: chosen so that the few real milliseconds between commands cannot change
// any outcome (see the header).

/** The model's time step (ms). Every model time is start + k·U. */
const U = 5000;
const RATE = 0.02; // tokens per second: one per 50 s (10 U)
const TOKEN_TTL_MS = 30_000; // 6 U
const LEASE_MS = 20_000; // 4 U
const REMEMBER_MS = TOKEN_TTL_MS + LEASE_MS; // how long a consumed claim id answers true again
const TIERS = [{ belowRank: 2, seconds: 1 }, { belowRank: 4, seconds: 3 }, { seconds: 5 }];
const ADVANCE_UNITS = [1, 2, 3, 4, 6, 10, 16, 25]; // 5 s … 125 s
const PREFIX = 'model';

/** The member pool, the whole universe of a run. Forms are the ways a caller may spell one member. */
const MEMBERS: ReadonlyArray<{ key: string; forms: readonly MemberId[] }> = [
  { key: 'alice', forms: ['alice'] },
  { key: '7', forms: [7, '7'] },
  { key: '{waitgate:x}:tokens', forms: ['{waitgate:x}:tokens'] },
  { key: 'ünï 🙂', forms: ['ünï 🙂'] },
  { key: '*?[a-z]', forms: ['*?[a-z]'] },
  { key: '0', forms: [0, '0'] },
];

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;
/** The signing keys of the signed runs' Redis side: Ed25519, whose signatures are deterministic. */
const SIGNING = signingWith('model', 'EdDSA');
const tokenIdOf = (token: string) => createHash('sha256').update(token).digest('hex').slice(0, 32);
/** The store's token behind what a side handed out: the pass's `jti` when it signs. */
const storeToken = (side: Side, token: string) =>
  side.signed ? (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { jti: string }).jti : token;
const forgedToken = (n: number) => createHash('sha256').update(`forged-${n}`).digest('base64url');
const MALFORMED = ['short', 'x'.repeat(44), `${'a'.repeat(42)}=`, `${'b'.repeat(42)} `, 'é'.repeat(43)];

// ---------------------------------------------------------------------------------------
// The model, from SPEC.md: states, deadlines, the bucket, FIFO.

interface TokenRec {
  handle: number;
  tokenExp: number;
  claim: number | null;
  claimExp: number;
}

interface Model {
  /** Model time, ms since the run began. */
  now: number;
  /** Member keys in entry order. */
  waiting: string[];
  /** Token records, expired ones included until something reaps them. */
  tokens: Map<string, TokenRec>;
  /** Consumed claim handle -> forget-after. */
  consumed: Map<number, number>;
  /** Bucket content in thousandths of a token (exact), null before the first admit. */
  bucketMilli: number | null;
  refilledAt: number;
  /** Token handle -> its member. */
  tokenOwner: string[];
  /** Member -> the last token it was issued. */
  lastToken: Map<string, number>;
  /** Claim handle -> member and token. */
  claims: Array<{ member: string; token: number }>;
  burst: number;
  maxActive: number | null;
  /** The last admit that found the line able to move (admitted someone, or nobody waited); null before. */
  movedAt: number | null;
  /** The pace of the line (src/rates.ts), null before the first admit. */
  pace: Pace | null;
}

const deadlineOf = (r: TokenRec) => (r.claim !== null && r.claimExp > r.tokenExp ? r.claimExp : r.tokenExp);
const liveRecord = (m: Model, key: string) => {
  const r = m.tokens.get(key);
  return r !== undefined && deadlineOf(r) > m.now ? r : undefined;
};

interface ExpectedPosition {
  status: Position['status'];
  rank: number | null;
  currentTotalWaitingCount: number;
  estimatedWaitSeconds: number | null;
  pollingIntervalSeconds: number;
  /** Token handle when READY. */
  token: number | null;
  tokenExp: number | null;
  /** WAITING: the estimate had the store's clock been `extraMs` later (Redis runs ahead of the model by up to ε). */
  estimateLater?: (extraMs: number) => number;
  /** The estimate plans with a measured pace of the line (not the rate alone). */
  paced?: boolean;
}

/**
 * The wait estimate (SPEC, src/position.ts): rank ÷ the configured rate (observed rates
 * here are always above it, see the header), scaled down by grace ÷ stall once the line
 * has not moved for longer than the grace; whole seconds rounded up, at least 1.
 */
function modelEstimate(m: Model, rank: number, extraMs = 0): number {
  let rate = RATE * (m.pace !== null && m.pace.offered >= MIN_PACE_EVIDENCE ? m.pace.factor : 1);
  if (m.movedAt !== null) {
    // The stall grace (src/position.ts): max(10 s, two admissions at the rate planned with, pace included).
    const grace = Math.max(10_000, 2000 / rate);
    const stalled = m.now + extraMs - m.movedAt;
    if (stalled > grace) rate *= grace / stalled;
  }
  return Math.max(1, Math.ceil(rank / rate));
}

const tierOf = (rank: number) => (TIERS.find((t) => t.belowRank === undefined || rank < t.belowRank) ?? TIERS[TIERS.length - 1]!).seconds;

function expectedPosition(m: Model, key: string): ExpectedPosition {
  const total = m.waiting.length;
  const r = liveRecord(m, key);
  if (r)
    return {
      status: 'READY',
      rank: null,
      currentTotalWaitingCount: total,
      estimatedWaitSeconds: null,
      pollingIntervalSeconds: tierOf(0),
      token: r.handle,
      tokenExp: r.tokenExp,
    };
  const rank = m.waiting.indexOf(key);
  if (rank >= 0) {
    return {
      status: 'WAITING',
      rank,
      currentTotalWaitingCount: total,
      estimatedWaitSeconds: modelEstimate(m, rank),
      pollingIntervalSeconds: tierOf(rank),
      token: null,
      tokenExp: null,
      estimateLater: (extraMs) => modelEstimate(m, rank, extraMs),
      paced: m.pace !== null && m.pace.offered >= MIN_PACE_EVIDENCE && m.pace.factor !== 1,
    };
  }
  return {
    status: 'NOT_ENTERED',
    rank: null,
    currentTotalWaitingCount: total,
    estimatedWaitSeconds: null,
    pollingIntervalSeconds: tierOf(0),
    token: null,
    tokenExp: null,
  };
}

function modelEnter(m: Model, key: string): void {
  const r = m.tokens.get(key);
  if (r && deadlineOf(r) <= m.now) m.tokens.delete(key); // expired unused: may join again at the back
  if (!m.tokens.has(key) && !m.waiting.includes(key)) m.waiting.push(key);
}

function modelAdmit(m: Model): { members: string[]; handles: number[]; expiresAt: number } {
  for (const [key, r] of m.tokens) if (deadlineOf(r) <= m.now) m.tokens.delete(key);
  const active = m.tokens.size;
  let full = m.bucketMilli === null; // at its burst, for the pace (as the stores judge it)
  if (m.bucketMilli === null) {
    m.bucketMilli = m.burst * 1000; // a new queue starts with a full bucket
    m.refilledAt = m.now;
  }
  if (m.now > m.refilledAt) {
    full ||= m.bucketMilli + (m.now - m.refilledAt) * RATE >= m.burst * 1000;
    m.bucketMilli = Math.min(m.burst * 1000, m.bucketMilli + (m.now - m.refilledAt) * RATE); // ms · tokens/s = milli-tokens
    m.refilledAt = m.now;
  }
  const whole = Math.min(Math.floor(m.bucketMilli / 1000), m.burst);
  const waitingBefore = m.waiting.length;
  let n = Math.min(Math.floor(m.bucketMilli / 1000), m.burst, m.waiting.length);
  if (m.maxActive !== null) n = Math.min(n, m.maxActive - active);
  n = Math.max(0, n);
  if (n > 0 || m.waiting.length === 0) m.movedAt = m.now;
  const members = m.waiting.splice(0, n); // I8: the head, in entry order
  const expiresAt = m.now + TOKEN_TTL_MS;
  const handles = members.map((key) => {
    const handle = m.tokenOwner.push(key) - 1;
    m.tokens.set(key, { handle, tokenExp: expiresAt, claim: null, claimExp: 0 });
    m.lastToken.set(key, handle);
    return handle;
  });
  m.bucketMilli -= n * 1000;
  // The pace of the line (src/rates.ts, as both stores keep it): a step that left members waiting counts.
  const counted = m.pace !== null && waitingBefore > n;
  m.pace = nextPace(m.pace, m.now, counted ? n : 0, counted ? stepOffer(n, whole, full, RATE, m.pace!.at, m.now) : 0);
  return { members, handles, expiresAt };
}

type ClaimOutcome = { status: 'CLAIMED'; claim: number; expiresAt: number } | { status: 'MISSING' | 'INVALID' | 'IN_USE' };

function modelClaim(m: Model, key: string, presented: number | 'forged'): ClaimOutcome {
  const r = liveRecord(m, key);
  if (!r || presented === 'forged' || r.handle !== presented) return { status: 'INVALID' };
  if (r.claim !== null && r.claimExp > m.now) return { status: 'IN_USE' };
  if (r.claim !== null) seen('claim over a lapsed lease');
  const claim = m.claims.push({ member: key, token: r.handle }) - 1;
  r.claim = claim;
  r.claimExp = m.now + LEASE_MS;
  return { status: 'CLAIMED', claim, expiresAt: r.claimExp };
}

function modelConsume(m: Model, claim: number): boolean {
  const forgetAt = m.consumed.get(claim);
  if (forgetAt !== undefined && forgetAt > m.now) return true;
  const { member } = m.claims[claim]!;
  const r = m.tokens.get(member);
  if (!r || r.claim !== claim || deadlineOf(r) <= m.now) return false;
  if (r.claimExp <= m.now) seen('consume of a lapsed, untaken claim');
  if (r.claimExp > r.tokenExp && r.tokenExp <= m.now) seen('consume past the TTL, inside the lease');
  m.tokens.delete(member);
  m.consumed.set(claim, m.now + REMEMBER_MS);
  return true;
}

function modelRelease(m: Model, claim: number): boolean {
  const { member } = m.claims[claim]!;
  const r = m.tokens.get(member);
  if (!r || r.claim !== claim || deadlineOf(r) <= m.now) return false;
  r.claim = null;
  r.claimExp = 0;
  return true;
}

function modelLeave(m: Model, key: string): boolean {
  const i = m.waiting.indexOf(key);
  if (i >= 0) m.waiting.splice(i, 1);
  const hadToken = liveRecord(m, key) !== undefined;
  m.tokens.delete(key);
  return i >= 0 || hadToken;
}

function modelStats(m: Model) {
  let active = 0;
  let claimed = 0;
  for (const r of m.tokens.values()) {
    if (deadlineOf(r) > m.now) active++;
    if (r.claim !== null && r.claimExp > m.now) claimed++;
  }
  return { waiting: m.waiting.length, active, claimed };
}

// ---------------------------------------------------------------------------------------
// The two real systems.

interface Side {
  label: 'memory' | 'redis';
  queue: WaitingQueue;
  /** Its queue has `signing`: tokens are signed passes. */
  signed: boolean;
  /** Token handle -> this store's token string. */
  tokens: string[];
  /** This store's token string -> handle: token identity, compared structurally. */
  handles: Map<string, number>;
  /** Claim handle -> this store's Claim. */
  claims: Claim[];
  /** An epoch-ms time this store reported, in model ms. */
  frame(abs: number): number;
}

interface Real {
  name: string;
  memory: Side;
  redis: Side;
  sides: readonly Side[];
  /** Upper bound of ε: real ms since the run's Redis TIME was read. */
  elapsed(): number;
  advance(ms: number): Promise<void>;
}

type Outcome<T> = { ok: true; value: T } | { ok: false; code: string };

async function attempt<T>(run: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await run() };
  } catch (error) {
    if (error instanceof EntryTokenError) return { ok: false, code: error.code };
    throw error; // anything else (a store error, a bug) fails the run
  }
}

/** Deep equality whose failure message shows both values whole (vitest's diff is cut short in fc reports). */
function expectSame(actual: unknown, expected: unknown, what: string): void {
  if (!isDeepStrictEqual(actual, expected)) {
    throw new Error(`${what}: got ${JSON.stringify(actual)}, model says ${JSON.stringify(expected)}`);
  }
}

/** A time reported by a store equals the model's: exactly in memory, up to ε later on Redis. */
function expectTime(side: Side, r: Real, abs: number, expected: number, what: string): void {
  const t = side.frame(abs);
  if (side.label === 'memory') {
    expectSame(t, expected, `memory ${what}`);
  } else {
    expect(t - expected, `redis ${what}: ${t} vs model ${expected}`).toBeGreaterThanOrEqual(0);
    expect(t - expected, `redis ${what}: ${t} vs model ${expected}`).toBeLessThanOrEqual(r.elapsed());
  }
}

function expectPosition(side: Side, r: Real, p: Position, e: ExpectedPosition, what: string): void {
  const { entryToken, entryTokenExpiresAt, estimatedWaitSeconds: estimate, ...rest } = p;
  const { status, rank, currentTotalWaitingCount, estimatedWaitSeconds, pollingIntervalSeconds } = e;
  expectSame(
    rest,
    { status, rank, currentTotalWaitingCount, pollingIntervalSeconds, queueMode: 'open', message: null, opensAt: null, stockLeft: null, likelyServed: null },
    `${side.label} ${what}`,
  );
  if (side.label === 'memory' || e.estimateLater === undefined) {
    expectSame(estimate, estimatedWaitSeconds, `${side.label} ${what}: estimatedWaitSeconds`);
  } else {
    // Redis TIME runs ahead of the model by ε ≤ r.elapsed(); a stalled line's estimate only grows with time.
    // The pace moves by a hair either way on Redis: the tokens offered grow with the time between steps
    // (a pace read lower: one second more), and the earlier steps' weights decay over that time too
    // (after steps that moved nobody, a pace read higher: one second less).
    const earlier = estimatedWaitSeconds! - (e.paced ? 1 : 0);
    const later = e.estimateLater(r.elapsed()) + (e.paced ? 1 : 0);
    expect(estimate!, `redis ${what}: estimatedWaitSeconds ${estimate} vs model ${earlier}..${later}`).toBeGreaterThanOrEqual(earlier);
    expect(estimate!, `redis ${what}: estimatedWaitSeconds ${estimate} vs model ${earlier}..${later}`).toBeLessThanOrEqual(later);
  }
  if (e.token === null) {
    expectSame([entryToken, entryTokenExpiresAt], [null, null], `${side.label} ${what}: no token unless READY`);
  } else {
    expectSame(side.handles.get(entryToken!), e.token, `${side.label} ${what}: token identity`);
    expectTime(side, r, entryTokenExpiresAt!, e.tokenExp!, `${what} entryTokenExpiresAt`);
  }
}

/** The invariants, checked on both stores after every command. */
async function checkInvariants(m: Model, r: Real, after: string): Promise<void> {
  const label = after.replace(/\(.*$/, '');
  coverage.set(label, (coverage.get(label) ?? 0) + 1);
  const expectedStats = modelStats(m);
  if ([...m.tokens.values()].some((t) => t.tokenExp <= m.now && deadlineOf(t) > m.now)) seen('READY past its TTL, inside a lease');
  const rates: number[] = [];
  for (const side of r.sides) {
    const positions = await Promise.all(MEMBERS.map((member) => side.queue.position(member.key)));
    positions.forEach((p, i) => expectPosition(side, r, p, expectedPosition(m, MEMBERS[i]!.key), `position(${MEMBERS[i]!.key}) after ${after}`));
    const stats = await side.queue.stats();
    expectSame({ waiting: stats.waiting, active: stats.active, claimed: stats.claimed }, expectedStats, `${side.label} stats after ${after}`);
    rates.push(stats.admittedPerSecond);
    // Waiting count = WAITING members; active = READY members: nobody is counted twice.
    expectSame(positions.filter((p) => p.status === 'WAITING').length, stats.waiting, `${side.label} waiting count`);
    expectSame(positions.filter((p) => p.status === 'READY').length, stats.active, `${side.label} active count`);
    // I4: READY + CLAIMED ≤ maxActive.
    if (m.maxActive !== null) expect(stats.active, `${side.label} I4`).toBeLessThanOrEqual(m.maxActive);
    // I2: at most one live token per member, and no token shared by two members.
    const held = positions.flatMap((p, i) => (p.entryToken === null ? [] : [[MEMBERS[i]!.key, p.entryToken] as const]));
    expectSame(new Set(held.map(([, t]) => t)).size, held.length, `${side.label} I2 distinct tokens`);
    for (const [key, token] of held) expectSame(m.tokenOwner[side.handles.get(token)!], key, `${side.label} I2 owner`);
  }
  // The observed rate: on Redis `now` is up to ε later, and the rate does not rise with time.
  const [memoryRate, redisRate] = rates as [number, number];
  expect(Number.isFinite(redisRate) && redisRate >= 0).toBe(true);
  expect(redisRate, `admittedPerSecond after ${after}`).toBeLessThanOrEqual(memoryRate + 1e-9);
  expect(redisRate, `admittedPerSecond after ${after}`).toBeGreaterThanOrEqual(memoryRate * (1 - (1.5 * r.elapsed()) / 1000) - 1e-9);
  await checkRedisStructure(m, r, after);
  const elapsed = r.elapsed();
  maxElapsed = Math.max(maxElapsed, elapsed);
  if (elapsed >= U / 2) {
    throw new Error(
      `timing premise broken: ${elapsed} ms of real time in one run (must stay below ${U / 2} ms); the machine is too slow for this test's clock model`,
    );
  }
}

/** Redis as stored: nobody both waiting and holding a live token; `active` mirrors the token records. */
async function checkRedisStructure(m: Model, r: Real, after: string): Promise<void> {
  const k = queueKeys(PREFIX, r.name);
  const [waiting, records, active, now] = await Promise.all([
    client.zrange(k.waiting, 0, -1),
    client.hgetall(k.tokens),
    client.zrange(k.active, 0, -1, 'WITHSCORES'),
    redisNowMs(client),
  ]);
  expectSame(waiting, m.waiting, `redis waiting zset after ${after}`);
  const activeScores = new Map<string, number>();
  for (let i = 0; i < active.length; i += 2) activeScores.set(active[i]!, Number(active[i + 1]));
  for (const [member, raw] of Object.entries(records)) {
    const [tokenExp, claimExp, claimId] = raw.split('|');
    const deadline = claimId !== '' && Number(claimExp) > Number(tokenExp) ? Number(claimExp) : Number(tokenExp);
    expectSame(activeScores.get(member), deadline, `redis active score of ${member} after ${after}`);
    if (deadline > now) expectSame(waiting.includes(member), false, `${member} both waiting and READY after ${after}`);
  }
  expectSame(
    [...activeScores.keys()].filter((member) => !(member in records)),
    [],
    `active without a token record after ${after}`,
  );
}

// ---------------------------------------------------------------------------------------
// Commands.

type Cmd = fc.AsyncCommand<Model, Real>;

const form = (mi: number, fi: number) => {
  const forms = MEMBERS[mi]!.forms;
  return forms[fi % forms.length]!;
};
const show = (id: MemberId) => (typeof id === 'number' ? String(id) : JSON.stringify(id));

class EnterCmd implements Cmd {
  constructor(
    readonly mi: number,
    readonly fi: number,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const key = MEMBERS[this.mi]!.key;
    modelEnter(m, key);
    const e = expectedPosition(m, key);
    for (const side of r.sides) expectPosition(side, r, await side.queue.enter(form(this.mi, this.fi)), e, this.toString());
    await checkInvariants(m, r, this.toString());
  }
  toString = () => `enter(${show(form(this.mi, this.fi))})`;
}

class ReadCmd implements Cmd {
  constructor(
    readonly mi: number,
    readonly fi: number,
    readonly how: 'position' | 'state' | 'token',
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const e = expectedPosition(m, MEMBERS[this.mi]!.key);
    const id = form(this.mi, this.fi);
    for (const side of r.sides) {
      if (this.how === 'position') expectPosition(side, r, await side.queue.position(id), e, this.toString());
      else if (this.how === 'state') expectSame(await side.queue.state(id), e.status, `${side.label} ${this.toString()}`);
      else {
        const t = await side.queue.token(id);
        if (e.token === null) expect(t, `${side.label} ${this.toString()}`).toBeNull();
        else {
          expectSame(side.handles.get(t!.entryToken), e.token, `${side.label} ${this.toString()}`);
          expectTime(side, r, t!.expiresAt, e.tokenExp!, this.toString());
        }
      }
    }
    await checkInvariants(m, r, this.toString());
  }
  toString = () => `${this.how}(${show(form(this.mi, this.fi))})`;
}

class AdmitCmd implements Cmd {
  check = () => true;
  async run(m: Model, r: Real) {
    const expected = modelAdmit(m);
    seen(`admit -> ${expected.members.length}`);
    if (m.maxActive !== null && modelStats(m).active === m.maxActive && m.waiting.length > 0) seen('admit held back by maxActive');
    for (const side of r.sides) {
      const admissions = await side.queue.admit();
      // I8: the head of the line, in entry order; exactly what bucket, burst and maxActive allow.
      expectSame(
        admissions.map((a) => a.memberId),
        expected.members,
        `${side.label} admit`,
      );
      admissions.forEach((a, i) => {
        expect(a.entryToken, `${side.label} token shape`).toMatch(side.signed ? COMPACT_JWS : TOKEN_SHAPE);
        expect(storeToken(side, a.entryToken), `${side.label} store token shape`).toMatch(TOKEN_SHAPE);
        expectSame(side.handles.has(a.entryToken), false, `${side.label} fresh token`);
        side.handles.set(a.entryToken, expected.handles[i]!);
        side.tokens[expected.handles[i]!] = a.entryToken;
        expectTime(side, r, a.expiresAt, expected.expiresAt, 'admission expiresAt');
      });
    }
    await checkInvariants(m, r, this.toString());
  }
  toString = () => 'admit()';
}

type Presented = { kind: 'own' } | { kind: 'any'; pick: number } | { kind: 'forged'; n: number } | { kind: 'empty' } | { kind: 'malformed'; i: number };

class ClaimCmd implements Cmd {
  constructor(
    readonly mi: number,
    readonly fi: number,
    readonly presented: Presented,
  ) {}
  check(m: Readonly<Model>) {
    if (this.presented.kind === 'own') return m.lastToken.has(MEMBERS[this.mi]!.key);
    if (this.presented.kind === 'any') return m.tokenOwner.length > 0;
    return true;
  }
  async run(m: Model, r: Real) {
    const key = MEMBERS[this.mi]!.key;
    const p = this.presented;
    const handle = p.kind === 'own' ? m.lastToken.get(key)! : p.kind === 'any' ? p.pick % m.tokenOwner.length : null;
    const expected: ClaimOutcome =
      p.kind === 'empty' ? { status: 'MISSING' } : p.kind === 'malformed' ? { status: 'INVALID' } : modelClaim(m, key, handle ?? 'forged');
    seen(`claim -> ${expected.status}`);
    for (const side of r.sides) {
      const token =
        handle !== null ? side.tokens[handle]! : p.kind === 'forged' ? forgedToken(p.n) : p.kind === 'malformed' ? MALFORMED[p.i % MALFORMED.length]! : '';
      const outcome = await attempt(() => side.queue.claim(form(this.mi, this.fi), token));
      if (expected.status !== 'CLAIMED') {
        expectSame(outcome, { ok: false, code: expected.status }, `${side.label} ${this.toString()}`);
        continue;
      }
      expectSame(outcome.ok, true, `${side.label} ${this.toString()}: ${JSON.stringify(outcome)}`);
      const claim = (outcome as { ok: true; value: Claim }).value;
      expect(claim.memberId).toBe(key);
      expectSame(claim.tokenId, tokenIdOf(storeToken(side, token)), `${side.label} tokenId is the token's stable id`);
      expect(claim.claimId).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expectTime(side, r, claim.expiresAt, expected.expiresAt, 'claim expiresAt');
      side.claims[expected.claim] = claim;
    }
    await checkInvariants(m, r, this.toString());
  }
  toString = () => {
    const p = this.presented;
    const what = p.kind === 'any' ? `token#${p.pick}` : p.kind === 'forged' ? `forged#${p.n}` : p.kind === 'malformed' ? `malformed#${p.i}` : p.kind;
    return `claim(${show(form(this.mi, this.fi))}, ${what})`;
  };
}

/** A claim by the k-th member (pool order) that holds a live token, with that token: the usual order request. */
class ClaimHolderCmd implements Cmd {
  constructor(readonly pick: number) {}
  check = (m: Readonly<Model>) => holders(m).length > 0;
  async run(m: Model, r: Real) {
    const list = holders(m);
    const mi = list[this.pick % list.length]!;
    await new ClaimCmd(mi, this.pick, { kind: 'own' }).run(m, r);
  }
  toString = () => `claim(holder#${this.pick}, own)`;
}

const holders = (m: Readonly<Model>) => MEMBERS.flatMap((x, i) => (liveRecord(m as Model, x.key) ? [i] : []));

class SettleCmd implements Cmd {
  constructor(
    readonly how: 'consume' | 'release',
    readonly pick: number,
  ) {}
  check = (m: Readonly<Model>) => m.claims.length > 0;
  async run(m: Model, r: Real) {
    const c = this.pick % m.claims.length;
    const expected = this.how === 'consume' ? modelConsume(m, c) : modelRelease(m, c);
    seen(`${this.how} -> ${expected}`);
    for (const side of r.sides) {
      const claim = side.claims[c]!;
      expectSame(await (this.how === 'consume' ? side.queue.consume(claim) : side.queue.release(claim)), expected, `${side.label} ${this.toString()}`);
    }
    await checkInvariants(m, r, this.toString());
  }
  toString = () => `${this.how}(claim#${this.pick})`;
}

class LeaveCmd implements Cmd {
  constructor(
    readonly mi: number,
    readonly fi: number,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const expected = modelLeave(m, MEMBERS[this.mi]!.key);
    seen(`leave -> ${expected}`);
    for (const side of r.sides) expectSame(await side.queue.leave(form(this.mi, this.fi)), expected, `${side.label} ${this.toString()}`);
    await checkInvariants(m, r, this.toString());
  }
  toString = () => `leave(${show(form(this.mi, this.fi))})`;
}

class StatsCmd implements Cmd {
  check = () => true;
  async run(m: Model, r: Real) {
    await checkInvariants(m, r, this.toString()); // compares stats() of both stores with the model
  }
  toString = () => 'stats()';
}

class AdvanceCmd implements Cmd {
  constructor(readonly units: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const deadlines = [...m.tokens.values()].flatMap((t) => [deadlineOf(t), t.claim === null ? -1 : t.claimExp]);
    m.now += this.units * U;
    if (deadlines.includes(m.now)) seen('advance lands exactly on a deadline');
    if ([...m.tokens.values()].some((t) => deadlineOf(t) <= m.now && deadlineOf(t) > m.now - this.units * U)) seen('advance expires a token');
    await r.advance(this.units * U);
    await checkInvariants(m, r, this.toString());
  }
  toString = () => `advance(${(this.units * U) / 1000}s)`;
}

const member = fc.nat({ max: MEMBERS.length - 1 });
const formIndex = fc.nat({ max: 1 });
const presented: fc.Arbitrary<Presented> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'own' as const }) },
  { weight: 2, arbitrary: fc.nat({ max: 40 }).map((pick) => ({ kind: 'any' as const, pick })) },
  { weight: 1, arbitrary: fc.nat({ max: 3 }).map((n) => ({ kind: 'forged' as const, n })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'empty' as const }) },
  { weight: 1, arbitrary: fc.nat({ max: MALFORMED.length - 1 }).map((i) => ({ kind: 'malformed' as const, i })) },
);

/** One weighted choice per step: enough admissions, claims and time to reach leases, expiries and the cap. */
const commandArb: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 5, arbitrary: fc.tuple(member, formIndex).map(([mi, fi]): Cmd => new EnterCmd(mi, fi)) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(member, formIndex, fc.constantFrom('position' as const, 'state' as const, 'token' as const))
      .map(([mi, fi, how]): Cmd => new ReadCmd(mi, fi, how)),
  },
  { weight: 4, arbitrary: fc.constant<Cmd>(new AdmitCmd()) },
  { weight: 3, arbitrary: fc.tuple(member, formIndex, presented).map(([mi, fi, p]): Cmd => new ClaimCmd(mi, fi, p)) },
  { weight: 4, arbitrary: fc.nat({ max: 5 }).map((pick): Cmd => new ClaimHolderCmd(pick)) },
  { weight: 3, arbitrary: fc.nat({ max: 20 }).map((pick): Cmd => new SettleCmd('consume', pick)) },
  { weight: 2, arbitrary: fc.nat({ max: 20 }).map((pick): Cmd => new SettleCmd('release', pick)) },
  { weight: 2, arbitrary: fc.tuple(member, formIndex).map(([mi, fi]): Cmd => new LeaveCmd(mi, fi)) },
  { weight: 1, arbitrary: fc.constant<Cmd>(new StatsCmd()) },
  { weight: 4, arbitrary: fc.constantFrom(...ADVANCE_UNITS).map((units): Cmd => new AdvanceCmd(units)) },
);

const configArb = fc.record({ burst: fc.integer({ min: 1, max: 3 }), maxActive: fc.constantFrom(null, 1, 2, 3), signed: fc.boolean() });

// ---------------------------------------------------------------------------------------
// The harness.

let server: RedisServer;
let client: Redis;
let redisStore: RedisStore;
let runs = 0;
/** Commands run per kind, and interesting outcomes: printed so that a walk that covers nothing shows. */
const coverage = new Map<string, number>();
const seen = (what: string) => coverage.set(what, (coverage.get(what) ?? 0) + 1);
/** The largest ε of any run: how far the premise (ε < U/2) was from breaking. */
let maxElapsed = 0;

beforeAll(async () => {
  server = await startRedisServer();
  client = new Redis(server.url, { maxRetriesPerRequest: 1 });
  redisStore = new RedisStore({ client, prefix: PREFIX });
});
afterAll(async () => {
  client?.disconnect();
  await server?.stop();
});

async function newRun(config: { burst: number; maxActive: number | null; signed: boolean }): Promise<{ model: Model; real: Real; dispose(): Promise<void> }> {
  const name = `m${++runs}-${randomBytes(3).toString('hex')}`;
  const wallStart = Date.now();
  const start = await redisNowMs(client); // MemoryStore's clock follows Redis TIME from here
  let memoryNow = start;
  let shifted = 0;
  const options = {
    name,
    admitRatePerSecond: RATE,
    admitBurst: config.burst,
    maxActive: config.maxActive,
    entryTokenTtlSeconds: TOKEN_TTL_MS / 1000,
    claimTtlSeconds: LEASE_MS / 1000,
    pollingIntervals: TIERS,
    operationTimeoutMs: 5000,
    abandonAfterSeconds: null, // abandonment is not part of this model
  };
  if (config.signed) seen('run with signed passes (redis side)');
  const side = (label: Side['label'], queue: WaitingQueue, frame: (abs: number) => number, signed = false): Side => ({
    label,
    queue,
    signed,
    tokens: [],
    handles: new Map(),
    claims: [],
    frame,
  });
  const memory = side('memory', new WaitingQueue({ store: new MemoryStore({ now: () => memoryNow }), ...options }), (abs) => abs - start);
  const redis = side(
    'redis',
    new WaitingQueue({ store: redisStore, ...options, ...(config.signed ? { signing: SIGNING } : {}) }),
    (abs) => abs + shifted - start,
    config.signed,
  );
  const real: Real = {
    name,
    memory,
    redis,
    sides: [memory, redis],
    elapsed: () => Date.now() - wallStart + 1,
    async advance(ms) {
      memoryNow += ms;
      await shiftQueueClock(client, PREFIX, name, ms);
      shifted += ms;
    },
  };
  const model: Model = {
    now: 0,
    waiting: [],
    tokens: new Map(),
    consumed: new Map(),
    bucketMilli: null,
    pace: null,
    movedAt: null,
    refilledAt: 0,
    tokenOwner: [],
    lastToken: new Map(),
    claims: [],
    burst: config.burst,
    maxActive: config.maxActive,
  };
  const dispose = async () => {
    const k = queueKeys(PREFIX, name);
    // The key set stays the fixed one, whatever the member ids (members are fields, never key names).
    const [, keys] = await client.scan('0', 'MATCH', `{${PREFIX}:${name}}*`, 'COUNT', 1000);
    const allowed = new Set(Object.values(k));
    expect(
      keys.filter((key) => !allowed.has(key)),
      'unexpected keys',
    ).toEqual([]);
    await client.del(...Object.values(k));
  };
  return { model, real, dispose };
}

const env = process.env;
const NUM_RUNS = Number(env.MODEL_RUNS ?? 600);

describe('model-based differential walk (R5): MemoryStore and RedisStore against one model', () => {
  it('the clock-shift script moves every stored timestamp of a queue back by Δ, and nothing else', async () => {
    const name = `shift-${randomBytes(3).toString('hex')}`;
    const queue = new WaitingQueue({ store: redisStore, name, admitRatePerSecond: 1, admitBurst: 2, entryTokenTtlSeconds: 60, claimTtlSeconds: 90 });
    await queue.enter('a');
    await queue.enter('b');
    await queue.enter('c');
    const [a, b] = await queue.admit();
    const claimA = await queue.claim('a', a!.entryToken);
    const claimB = await queue.claim('b', b!.entryToken);
    expect(await queue.consume(claimB)).toBe(true);
    const k = queueKeys(PREFIX, name);
    const snapshot = async () => ({
      tokens: await client.hgetall(k.tokens),
      active: await client.zrange(k.active, 0, -1, 'WITHSCORES'),
      leases: await client.zrange(k.leases, 0, -1, 'WITHSCORES'),
      consumed: await client.zrange(k.consumed, 0, -1, 'WITHSCORES'),
      meta: await client.hgetall(k.meta),
      admits: await client.zrange(k.admits, 0, -1, 'WITHSCORES'),
      waiting: await client.zrange(k.waiting, 0, -1, 'WITHSCORES'),
      seen: await client.hgetall(k.seen),
      entries: await client.zrange(k.entries, 0, -1, 'WITHSCORES'),
    });
    const before = await snapshot();
    const delta = 45_000;
    // tokenExp + claimExp of a; scores of active (a), leases (a), consumed (claimB), admits (1 call);
    // bts, ws, wf, wl, mv; c's last sign of life (a and b were admitted: theirs are gone);
    // kt and the one entry checkpoint (a, b and c entered within a second); ows (b's order).
    expect(before.entries).toHaveLength(2);
    expect(await shiftQueueClock(client, PREFIX, name, delta)).toBe(2 + 1 + 1 + 1 + 1 + 6 + 1 + 2 + 1);
    const after = await snapshot();
    const back = (v: string) => String(Number(v) - delta);
    const [te, ce, ...rest] = before.tokens.a!.split('|');
    expect(after.tokens).toEqual({ a: [back(te!), back(ce!), ...rest].join('|') });
    for (const z of ['active', 'leases', 'consumed', 'admits'] as const) expect(after[z]).toEqual(before[z].map((v, i) => (i % 2 ? back(v) : v)));
    expect(after.meta).toEqual({
      ...before.meta,
      bts: back(before.meta.bts!),
      ws: back(before.meta.ws!),
      wf: back(before.meta.wf!),
      wl: back(before.meta.wl!),
      mv: back(before.meta.mv!),
      kt: back(before.meta.kt!),
      ows: back(before.meta.ows!),
      pz: back(before.meta.pz!),
    });
    expect(after.entries).toEqual([back(before.entries[0]!), before.entries[1]]);
    expect(after.seen).toEqual({ c: back(before.seen.c!) });
    expect(after.waiting).toEqual(before.waiting); // sequences are not times
    // And it reads as 45 s having passed: the lease (90 s) outlives the token TTL (60 s)...
    expect((await queue.position('a')).status).toBe('READY');
    await shiftQueueClock(client, PREFIX, name, 50_000); // ...until 95 s: both ended
    expect((await queue.position('a')).status).toBe('NOT_ENTERED');
    expect(await queue.consume(claimA)).toBe(false);
    // The bucket refilled 95 tokens' worth, capped at the burst of 2.
    expect((await queue.admit()).map((x) => x.memberId)).toEqual(['c']);
    // The script declares every key it touches (it runs under the #!lua key checks).
    expect(SHIFT_CLOCK_LUA.startsWith('#!lua\n')).toBe(true);
    expect(shiftClockKeys(PREFIX, name)).toHaveLength(8);
    await client.del(...Object.values(k));
  });

  it(`gives the model's results on both stores, with I2, I4, I8 and the counts after every step (${NUM_RUNS} runs)`, async () => {
    const property = fc.asyncProperty(
      configArb,
      fc.commands([commandArb], { maxCommands: 60, size: 'max', ...(env.MODEL_REPLAY_PATH ? { replayPath: env.MODEL_REPLAY_PATH } : {}) }),
      async (config, cmds) => {
        const { model, real, dispose } = await newRun(config);
        await fc.asyncModelRun(() => ({ model, real }), cmds);
        await dispose();
      },
    );
    const startedAt = Date.now();
    const details = await fc.check(property, {
      numRuns: NUM_RUNS,
      ...(env.MODEL_SEED ? { seed: Number(env.MODEL_SEED) } : {}),
      ...(env.MODEL_PATH ? { path: env.MODEL_PATH } : {}),
    });
    if (details.failed) {
      const replayPath = /replayPath="([^"]*)"/.exec(fc.stringify(details.counterexample))?.[1];
      const replay = `MODEL_SEED=${details.seed} MODEL_PATH=${details.counterexamplePath}${replayPath ? ` MODEL_REPLAY_PATH='${replayPath}'` : ''}`;
      const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
      throw new Error(
        `${fc.defaultReportMessage(details)}\n\nFirst divergence in the shrunk case:\n${cause}\n\nReplay: ${replay} npx vitest run --project faults test/faults/model.test.ts`,
      );
    }
    const counts = [...coverage]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `  ${k}: ${v}`)
      .join('\n');
    console.info(
      `model walk: ${details.numRuns} runs in ${Date.now() - startedAt} ms (seed ${details.seed}), longest run ${maxElapsed} ms of real time\n${counts}`,
    );
  });
});
