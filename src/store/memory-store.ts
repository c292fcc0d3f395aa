// MemoryStore: the same semantics as RedisStore, in process, with an injectable clock.

import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { EMPTY_WINDOW, recordAdmissionStep } from '../admission-window.js';
import { drawScore, type QueueMode } from '../controls.js';
import { QueueClosedError, WaitgateConfigError } from '../errors.js';
import { parseStrict } from '../options.js';
import { EVALUATE_EVERY_MS, ORDER_WINDOW_MS, OrderWindow, nextRate } from '../admission-control.js';
import { EntryCheckpoints, recordWaits, type WaitSlot } from '../queue-figures.js';
import type { MemberInspection, QueueTotals } from '../types.js';
import type {
  AdmissionWindow,
  AdmitRequest,
  AdmitResult,
  ClaimRequest,
  ClaimResult,
  ConsumeRequest,
  ControlsRequest,
  ControlsView,
  EnterOptions,
  HeadMovesListener,
  HeadMovesWatch,
  MemberSnapshot,
  QueueSnapshot,
  ReleaseRequest,
  StatsSnapshot,
  Store,
  StoredControls,
} from './store.js';
import { WaitingLine } from './waiting-line.js';
import { Revocations } from './memory/revocations.js';
import { MIN_PACE_EVIDENCE, PICKUP_GRACE_MS, defaultBurst, nextPace, presenceHead, stepOffer, type Pace } from '../rates.js';

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /** The clock, epoch ms. Tests inject one to move time without sleeping. Default `Date.now`. */
  now?: () => number;
}

/** A token as the store keeps it; mirrors lua/includes/tokenRecord.lua. */
interface TokenRecord {
  token: string;
  tokenExp: number;
  claimId: string | null;
  claimExp: number;
  /** While nobody has read the token (pickupTimeoutSeconds): when it is dropped; 0 once read. */
  pickupBy: number;
  /** Its lease lapsed and was counted as a failed order (mirrors removing it from the `leases` key). */
  leaseCounted?: boolean;
  /** When a release of it last counted as a failed order (at most once per ORDER_WINDOW_MS). */
  failedAt?: number;
}

interface QueueState {
  seq: number;
  waiting: WaitingLine;
  tokens: Map<string, TokenRecord>;
  /** claim id -> forget-after (ms). */
  consumed: Map<string, number>;
  bucket: { tokens: number; refilledAt: number } | null;
  window: AdmissionWindow;
  /** admit id -> forget-after (ms): a repeated id is a re-sent call (mirrors the `admits` key). */
  recentAdmits: Map<string, number>;
  controls: Controls;
  /** member -> last sign of life (ms), near the head only (mirrors the `seen` key). */
  seen: Map<string, number>;
  /** Totals since the queue began (mirrors meta te ta ab tc tx). */
  totals: QueueTotals;
  /** The wait of each minute's admissions, a ring of WAIT_SLOTS (mirrors meta w0 .. w9). */
  waitSlots: Array<WaitSlot | undefined>;
  /** Entry checkpoints (mirrors the `entries` key). */
  entries: EntryCheckpoints;
  /** Orders settled lately (mirrors meta ows .. opn). */
  orders: OrderWindow;
  /** The rate adaptive admission set, and when (mirrors meta ar, ae); null before. */
  adaptive: { rate: number; evaluatedAt: number } | null;
  /** The drop bucket (mirrors meta dt/dts), null before the first drop check. */
  dropBucket: { tokens: number; refilledAt: number } | null;
  /** The pace of the line (mirrors meta pm pc pz pf), null before a step that left members waiting. */
  pace: Pace | null;
  /** Members admission steps took off the line (mirrors meta hm). */
  headMoves: number;
  /** Listeners of watchHeadMoves (the channel "<meta key>:moves" of RedisStore). */
  headMoveListeners: Set<HeadMovesListener>;
}

/** The controls as kept (mirrors lua/includes/controls.lua); undefined: never set. */
interface Controls {
  mode?: QueueMode;
  message?: string;
  rate?: number;
  burst?: number;
  /** null: no cap. */
  maxActive?: number | null;
  opensAt?: number;
  shuffle?: boolean;
  seed?: string;
  commitment?: string;
  version: number;
  /** First score of the pre-queue, and the score base of entries after its opening. */
  preQueueFrom?: number;
  scoreBase?: number;
}

/** lua/includes/controls.lua DRAW_RANGE: 2^40. */
const DRAW_RANGE = 2 ** 40;
/** lua/popAndIssue-8.lua PASSTHROUGH_BATCH, MAX_DROPS and MAX_HELD. */
const PASSTHROUGH_BATCH = 2000;
const MAX_DROPS = 1000;
const MAX_HELD = 256;

/** How long an admit id is remembered (as the Lua script does). */
const ADMIT_ID_MEMORY_MS = 300_000;

const optionsSchema = z.strictObject({
  now: z.custom<() => number>((f) => typeof f === 'function', 'must be a function returning epoch milliseconds').optional(),
});

/** The moment a token stops existing: its TTL, pushed out by a live claim's lease, or its pick-up deadline and grace. */
function deadlineOf(r: TokenRecord): number {
  if (r.claimId !== null && r.claimExp > r.tokenExp) return r.claimExp;
  return r.pickupBy > 0 && r.pickupBy + PICKUP_GRACE_MS < r.tokenExp ? r.pickupBy + PICKUP_GRACE_MS : r.tokenExp;
}

function sameToken(a: string, b: string): boolean {
  // Equal-length digests, compared in constant time: nothing leaks about the stored token.
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/**
 * The ranks probed inside a drawn pre-queue band (lua/queueSnapshot-2.lua DENSE_RANKS):
 * from 768, every max(16, floor(r² / 50,000)) ranks below 50,000; 68 ranks. Drawn
 * scores are random, so the count between two probes strays from a straight line by
 * about the square root of the segment's length: with segments of at most (r / 224)²
 * around a rank r from rank 1,000 on (and the doubling ones from 50,000, shorter than
 * that), an interpolated rank stays within about 1% of the exact one.
 */
const DENSE_RANKS: readonly number[] = (() => {
  const ranks: number[] = [];
  for (let rank = 768; rank < 50_000; rank += Math.max(16, Math.floor((rank * rank) / 50_000))) ranks.push(rank);
  return ranks;
})();

/**
 * The rank probes of lua/queueSnapshot-2.lua: ranks 0, 64, 128, 256, … while below
 * size − 1, and size − 1, and the members on both sides of each boundary of the
 * pre-queue band [from, to) of scores, and, where that band was drawn, the
 * {@link DENSE_RANKS} inside it.
 */
function rankProbes(line: WaitingLine, band: { from: number; to: number; drawn: boolean } | null): Array<{ rank: number; seq: number }> {
  const lastRank = line.size - 1;
  if (lastRank < 0) return [];
  const ranks = new Set<number>([0, lastRank]);
  for (let rank = 64; rank < lastRank; rank *= 2) ranks.add(rank);
  if (band) {
    const [from, to] = [line.countBelow(band.from), line.countBelow(band.to)]; // the band's ranks: from .. to − 1
    for (const below of [from, to]) if (below > 0 && below <= lastRank) ranks.add(below - 1).add(below);
    if (band.drawn) for (const rank of DENSE_RANKS) if (rank >= from && rank < to) ranks.add(rank);
  }
  return [...ranks].sort((a, b) => a - b).map((rank) => ({ rank, seq: line.seqAtRank(rank)! }));
}

/** A scheduled opening is still ahead (`now < opensAt`, as the scripts compare). */
function beforeOpening(c: Controls, now: number): boolean {
  return c.opensAt !== undefined && now < c.opensAt;
}

/** The controls a position shows. */
function controlsView(c: Controls, adaptiveRate: number | undefined): ControlsView {
  return {
    mode: c.mode ?? 'open',
    message: c.message ?? null,
    opensAt: c.opensAt ?? null,
    shuffle: c.shuffle === true,
    preQueueFrom: c.preQueueFrom ?? null,
    admitRatePerSecond: c.rate ?? null,
    admitBurst: c.burst ?? null,
    adaptiveRate: adaptiveRate ?? null,
  };
}

/**
 * A {@link Store} kept in this process: for tests and single-instance use. Same
 * semantics as `RedisStore`, each operation one synchronous step; time comes from
 * the injected `now()`, so tests can expire tokens and leases without sleeping.
 *
 * @example
 * ```ts
 * let now = Date.now();
 * const store = new MemoryStore({ now: () => now });
 * now += 301_000; // every unused 300 s token is now expired
 * ```
 */
export class MemoryStore implements Store {
  readonly #now: () => number;
  readonly #queues = new Map<string, QueueState>();
  readonly #revocations = new Revocations();

  constructor(options: MemoryStoreOptions = {}) {
    this.#now = parseStrict(optionsSchema, options).now ?? Date.now;
  }

  /** `options.notAfter` is not needed here: an in-process call cannot arrive late. */
  async enter(queue: string, memberId: string, options: EnterOptions = {}): Promise<MemberSnapshot> {
    const q = this.#queue(queue);
    const now = this.#now();
    const record = q.tokens.get(memberId);
    if (record && deadlineOf(record) <= now) {
      q.tokens.delete(memberId);
      q.totals.expired++;
    }
    const held = q.tokens.get(memberId);
    if (held) held.pickupBy = 0; // answering READY: the token is picked up
    if (held || q.waiting.has(memberId)) return this.#present(q, memberId, now, options.presenceHead);
    const c = q.controls;
    if (c.mode === 'closed') throw new QueueClosedError(c.message ?? null);
    // Passthrough lets a new member through, except before a scheduled opening (then it pre-queues).
    if (c.mode === 'passthrough' && !beforeOpening(c, now)) {
      if (options.token === undefined || options.tokenTtlMs === undefined) return { ...this.#snapshot(q, memberId, now), needsToken: true };
      q.tokens.set(memberId, { token: options.token, tokenExp: now + options.tokenTtlMs, claimId: null, claimExp: 0, pickupBy: 0 });
      q.totals.entered++;
      q.totals.admitted++;
      recordWaits(q.waitSlots, now, [0]);
      return { ...this.#snapshot(q, memberId, now), joined: true };
    }
    const seq = ++q.seq;
    const preQueue = beforeOpening(c, now) && c.preQueueFrom !== undefined;
    const score = preQueue ? c.preQueueFrom! + (c.shuffle && c.seed !== undefined ? drawScore(c.seed, memberId) : seq) : (c.scoreBase ?? 0) + seq;
    q.waiting.insert(memberId, score);
    q.totals.entered++;
    // A pre-queue place waits from the opening; any other from its entry checkpoint.
    if (!preQueue) q.entries.note(score, now);
    return { ...this.#present(q, memberId, now, options.presenceHead), joined: true };
  }

  /** The member's snapshot after an enter; a waiting member near the head (rank below `presenceHead`) is seen now. */
  #present(q: QueueState, memberId: string, now: number, presenceHead: number | undefined): MemberSnapshot {
    const snapshot = this.#snapshot(q, memberId, now);
    if (snapshot.rank !== null && presenceHead !== undefined && snapshot.rank < presenceHead) q.seen.set(memberId, now);
    return snapshot;
  }

  async position(queue: string, memberId: string): Promise<MemberSnapshot> {
    return this.#snapshot(this.#queue(queue), memberId, this.#now());
  }

  async admit(queue: string, request: AdmitRequest): Promise<AdmitResult> {
    const q = this.#queue(queue);
    const now = this.#now();
    const expiresAt = now + request.tokenTtlMs;
    // A lease that lapsed is an order that neither committed nor rolled back in time: a
    // failure, counted once (mirrors reaping the `leases` key), whether its token lives on.
    let lapsed = 0;
    for (const [member, record] of q.tokens) {
      if (record.claimId !== null && record.claimExp > 0 && record.claimExp <= now && !record.leaseCounted) {
        record.leaseCounted = true;
        lapsed++;
      }
      if (deadlineOf(record) > now) continue;
      q.tokens.delete(member);
      q.totals.expired++;
    }
    if (lapsed > 0) q.orders.record(now, { count: lapsed, failed: lapsed, latency: 0, samples: 0 });
    const active = q.tokens.size;
    for (const [id, forgetAt] of q.recentAdmits) if (forgetAt <= now) q.recentAdmits.delete(id);
    if (q.recentAdmits.has(request.admitId)) return { expiresAt, active, admitted: [], admittable: 0, abandoned: [], held: 0 };
    // The controls override the caller's options where set.
    const c = q.controls;
    const rate = c.rate ?? this.#adaptiveRate(q, now, request);
    const burst = c.burst ?? (request.burstFollowsRate ? defaultBurst(rate) : request.burst);
    const maxActive = c.maxActive === undefined ? request.maxActive : c.maxActive;
    const bucket = q.bucket ?? { tokens: burst, refilledAt: now };
    let full = q.bucket === null; // at its burst, for the pace (mirrors the script)
    if (now > bucket.refilledAt) {
      full ||= bucket.tokens + ((now - bucket.refilledAt) * rate) / 1000 >= burst;
      bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.refilledAt) * rate) / 1000);
      bucket.refilledAt = now;
    }
    const whole = Math.min(Math.floor(bucket.tokens + 1e-9), burst);
    const waitingBefore = q.waiting.size;
    let admittable = Math.min(Math.floor(bucket.tokens + 1e-9), burst, waitingBefore);
    if (maxActive !== null) admittable = Math.min(admittable, maxActive - active);
    const passthrough = c.mode === 'passthrough';
    if (passthrough) admittable = Math.min(waitingBefore, PASSTHROUGH_BATCH);
    if (c.mode === 'paused' || c.mode === 'closed' || beforeOpening(c, now)) admittable = 0;
    admittable = Math.max(0, admittable);
    const n = Math.min(admittable, request.tokens.length);
    const standing = c.mode === 'paused' || c.mode === 'closed' || beforeOpening(c, now);

    // Take members from the head until n live members are found; the dead are dropped at
    // no admission cost, the silent for holdSilentAfterMs (not yet abandonAfterMs) are
    // held: left in place (mirrors lua/popAndIssue-8.lua).
    const abandonAfter = request.abandonAfterMs ?? null;
    const tracking = abandonAfter !== null && !passthrough;
    const holdSilent = tracking && (request.holdSilentAfterMs ?? -1) >= 0 ? request.holdSilentAfterMs! : null;
    // The drop bucket: one second's worth of drops, refilled at the pace that carries the
    // line across the presence head (computed from the rate and burst in force) in the horizon.
    const horizon = request.dropHorizonMs ?? null;
    const dropRate = tracking && horizon !== null ? (presenceHead(rate, burst, abandonAfter) * 1000) / horizon : null;
    let dropBudget = MAX_DROPS;
    if (tracking && dropRate !== null) {
      const capacity = Math.max(1, dropRate);
      const drops = q.dropBucket ?? { tokens: capacity, refilledAt: now };
      if (now > drops.refilledAt) {
        drops.tokens = Math.min(capacity, drops.tokens + ((now - drops.refilledAt) * dropRate) / 1000);
        drops.refilledAt = now;
      }
      q.dropBucket = drops;
      dropBudget = Math.min(MAX_DROPS, Math.floor(drops.tokens + 1e-9));
    }
    const live: string[] = [];
    const liveScores: number[] = [];
    const abandoned: string[] = [];
    const held = new Set<string>();
    let examined = 0; // the members before this rank are decided or held
    while (live.length < n) {
      const member = q.waiting.memberAtRank(examined);
      if (member === null) break;
      const seenAt = q.seen.get(member);
      if (tracking && (seenAt === undefined || now - seenAt > abandonAfter)) {
        if (abandoned.length >= dropBudget) break; // out of drops: it stays in place, and so does everyone behind it
        abandoned.push(member);
        q.seen.delete(member);
      } else if (holdSilent !== null && held.size < MAX_HELD && now - seenAt! > holdSilent) {
        // Beyond MAX_HELD a silent member is admitted, as without holding: the held never slow the line down.
        held.add(member);
      } else {
        live.push(member);
        liveScores.push(q.waiting.seqOf(member)!);
        q.seen.delete(member);
      }
      examined++;
    }
    q.waiting.removeHeadExcept(examined, held);
    if (q.dropBucket && tracking && dropRate !== null) q.dropBucket.tokens -= abandoned.length;
    const pickupBy = request.pickupTimeoutMs === undefined || request.pickupTimeoutMs === null ? 0 : Math.min(now + request.pickupTimeoutMs, expiresAt);
    const admitted = live.map((memberId, i) => {
      const entryToken = request.tokens[i]!;
      q.tokens.set(memberId, { token: entryToken, tokenExp: expiresAt, claimId: null, claimExp: 0, pickupBy });
      const from = this.#waitingSince(q, liveScores[i]!);
      return { memberId, entryToken, waitedMs: from === null ? null : Math.max(0, now - from) };
    });
    q.totals.admitted += admitted.length;
    recordWaits(
      q.waitSlots,
      now,
      admitted.flatMap((a) => (a.waitedMs === null ? [] : [a.waitedMs])),
    );
    if (admitted.length > 0 || abandoned.length > 0) q.entries.trim(q.waiting.head() === null ? null : q.waiting.seqOf(q.waiting.head()!));
    if (!passthrough) bucket.tokens -= admitted.length;
    q.bucket = bucket;
    q.totals.abandoned += abandoned.length;
    q.window = recordAdmissionStep(q.window, admitted.length, waitingBefore, now, request.windowMs, abandoned.length);
    // The pace of the line (mirrors lua/popAndIssue-8.lua): every step decays it; a step
    // that left members waiting adds its moves and the tokens the rate offered since the step before.
    const moved = admitted.length + abandoned.length;
    const counted = q.pace !== null && !passthrough && !standing && waitingBefore > moved;
    q.pace = nextPace(q.pace, now, counted ? moved : 0, counted ? stepOffer(admitted.length, whole, full, rate, q.pace!.at, now) : 0);
    q.window = { ...q.window, pace: q.pace.offered >= MIN_PACE_EVIDENCE ? q.pace.factor : null };
    q.recentAdmits.set(request.admitId, now + ADMIT_ID_MEMORY_MS);
    if (admitted.length + abandoned.length > 0) {
      const headMoves = (q.headMoves += admitted.length + abandoned.length);
      // After this call returns, as a push from Redis arrives after the step.
      for (const listener of q.headMoveListeners) queueMicrotask(() => listener(headMoves));
    }
    return { expiresAt, active: active + admitted.length, admitted, admittable, abandoned, held: held.size };
  }

  /** Adaptive admission's rate in force, evaluated at most once a second (mirrors lua/popAndIssue-8.lua). */
  #adaptiveRate(q: QueueState, now: number, request: AdmitRequest): number {
    const limits = request.adaptive;
    if (!limits) return request.ratePerSecond;
    let state = q.adaptive;
    const inForce = state?.rate ?? Math.min(limits.maxRatePerSecond, Math.max(limits.minRatePerSecond, request.ratePerSecond));
    if (!state || now - state.evaluatedAt >= EVALUATE_EVERY_MS || now < state.evaluatedAt) {
      state = q.adaptive = { rate: nextRate(inForce, q.orders.read(now), limits), evaluatedAt: now };
    }
    return state.rate;
  }

  async claim(queue: string, request: ClaimRequest): Promise<ClaimResult> {
    const q = this.#queue(queue);
    const now = this.#now();
    const record = q.tokens.get(request.memberId);
    if (!record || deadlineOf(record) <= now || !sameToken(request.token, record.token)) return { status: 'INVALID' };
    if (record.claimId === request.claimId) return { status: 'CLAIMED', expiresAt: record.claimExp };
    if (record.claimId !== null && record.claimExp > now) return { status: 'IN_USE', leaseExpiresAt: record.claimExp, now };
    record.claimId = request.claimId;
    record.claimExp = now + request.leaseMs;
    record.leaseCounted = false;
    record.pickupBy = 0; // a claim picks the token up
    return { status: 'CLAIMED', expiresAt: record.claimExp };
  }

  async consume(queue: string, request: ConsumeRequest): Promise<boolean> {
    const q = this.#queue(queue);
    const now = this.#now();
    if (q.consumed.has(request.claimId) && q.consumed.get(request.claimId)! > now) return true;
    const record = q.tokens.get(request.memberId);
    if (!record || record.claimId !== request.claimId || deadlineOf(record) <= now) return false;
    q.tokens.delete(request.memberId);
    for (const [claimId, forgetAt] of q.consumed) if (forgetAt <= now) q.consumed.delete(claimId);
    q.consumed.set(request.claimId, now + request.rememberMs);
    q.totals.consumed++;
    if (!record.leaseCounted) q.orders.record(now, this.#settled(record, now, request.leaseMs, false));
    return true;
  }

  async release(queue: string, request: ReleaseRequest): Promise<boolean> {
    const q = this.#queue(queue);
    const record = q.tokens.get(request.memberId);
    const now = this.#now();
    if (!record || record.claimId !== request.claimId || deadlineOf(record) <= now) return false;
    // Only a failed order path counts, once per token per order window (mirrors lua/release-4.lua).
    const last = record.failedAt ?? 0;
    if (!record.leaseCounted && request.failed !== false && (now - last >= ORDER_WINDOW_MS || now < last)) {
      record.failedAt = now;
      q.orders.record(now, this.#settled(record, now, request.leaseMs, true));
    }
    record.claimId = null;
    record.claimExp = 0;
    return true;
  }

  /** One settled order for the order window: its latency from the claim when the lease is known. */
  #settled(record: TokenRecord, now: number, leaseMs: number | undefined, failed: boolean) {
    const measured = leaseMs !== undefined && record.claimExp > 0;
    return { count: 1, failed: failed ? 1 : 0, latency: measured ? Math.max(0, now - (record.claimExp - leaseMs)) : 0, samples: measured ? 1 : 0 };
  }

  async leave(queue: string, memberId: string): Promise<boolean> {
    const q = this.#queue(queue);
    const wasWaiting = q.waiting.remove(memberId);
    q.seen.delete(memberId);
    const record = q.tokens.get(memberId);
    const hadToken = record !== undefined && deadlineOf(record) > this.#now();
    q.tokens.delete(memberId);
    return wasWaiting || hadToken;
  }

  async revoke(queue: string, memberId: string, request: { retainMs: number }): Promise<boolean> {
    const q = this.#queue(queue);
    const now = this.#now();
    const record = q.tokens.get(memberId);
    q.tokens.delete(memberId);
    this.#revocations.revoke(queue, memberId, now, request.retainMs);
    return record !== undefined && deadlineOf(record) > now;
  }

  async revokedAt(queue: string, memberId: string): Promise<number | null> {
    return this.#revocations.revokedAt(queue, memberId);
  }

  async stats(queue: string): Promise<StatsSnapshot> {
    const q = this.#queue(queue);
    const now = this.#now();
    let active = 0;
    let claimed = 0;
    for (const record of q.tokens.values()) {
      if (deadlineOf(record) > now) active++;
      if (record.claimId !== null && record.claimExp > now) claimed++;
    }
    return {
      waiting: q.waiting.size,
      active,
      claimed,
      abandoned: q.totals.abandoned,
      window: q.window,
      now,
      totals: { ...q.totals },
      pinnedRate: q.controls.rate ?? null,
      adaptiveRate: q.adaptive?.rate ?? null,
      waitSlots: q.waitSlots.map((slot) => slot && { ...slot, counts: new Map(slot.counts) }),
    };
  }

  async inspect(queue: string, memberId: string): Promise<Omit<MemberInspection, 'memberId'>> {
    const q = this.#queue(queue);
    const now = this.#now();
    const record = q.tokens.get(memberId);
    const base = { totalWaiting: q.waiting.size, now, rank: null, tokenExpiresAt: null, leaseExpiresAt: null, pickupBy: null, lastSeenAt: null };
    if (record && deadlineOf(record) > now) {
      const claimed = record.claimId !== null && record.claimExp > now;
      return {
        ...base,
        status: claimed ? 'CLAIMED' : 'READY',
        tokenExpiresAt: record.tokenExp,
        leaseExpiresAt: claimed ? record.claimExp : null,
        pickupBy: record.pickupBy > 0 ? record.pickupBy : null,
      };
    }
    const rank = q.waiting.rank(memberId);
    if (rank === null) return { ...base, status: 'NOT_ENTERED' };
    return { ...base, status: 'WAITING', rank, lastSeenAt: q.seen.get(memberId) ?? null };
  }

  /** When the member with this entry score began to wait: the opening for a pre-queue place, else its entry checkpoint. */
  #waitingSince(q: QueueState, score: number): number | null {
    const c = q.controls;
    if (c.preQueueFrom !== undefined && c.scoreBase !== undefined && score >= c.preQueueFrom && score < c.scoreBase) return c.opensAt ?? null;
    return q.entries.entryTime(score);
  }

  async touch(queue: string, request: { seen: readonly string[]; pickedUp: readonly string[] }): Promise<number> {
    const q = this.#queue(queue);
    const now = this.#now();
    let recorded = 0;
    for (const memberId of request.seen) {
      if (!q.waiting.has(memberId)) continue;
      q.seen.set(memberId, now);
      recorded++;
    }
    for (const memberId of request.pickedUp) {
      const record = q.tokens.get(memberId);
      if (!record || record.pickupBy === 0 || deadlineOf(record) <= now) continue;
      record.pickupBy = 0;
      recorded++;
    }
    return recorded;
  }

  async queueSnapshot(queue: string): Promise<QueueSnapshot> {
    const q = this.#queue(queue);
    const { head, last } = q.waiting.ends();
    const c = q.controls;
    // The pre-queue band; drawn while shuffle is on, or while its seed is kept (shuffle turned off after the opening).
    const band =
      c.preQueueFrom !== undefined && c.scoreBase !== undefined
        ? { from: c.preQueueFrom, to: c.scoreBase, drawn: c.shuffle === true || c.seed !== undefined }
        : null;
    return {
      totalWaiting: q.waiting.size,
      headSeq: head,
      lastSeq: last,
      window: q.window,
      now: this.#now(),
      probes: rankProbes(q.waiting, band),
      controls: controlsView(q.controls, q.adaptive?.rate),
      headMoves: q.headMoves,
    };
  }

  /** Admission steps of `queue` in this process, pushed to `listener` (always live: nothing is between them). */
  watchHeadMoves(queue: string, listener: HeadMovesListener): HeadMovesWatch {
    const listeners = this.#queue(queue).headMoveListeners;
    listeners.add(listener);
    return { live: () => true, stop: () => void listeners.delete(listener) };
  }

  async setControls(queue: string, request: ControlsRequest): Promise<{ version: number }> {
    const q = this.#queue(queue);
    const now = this.#now();
    const current = q.controls;
    const p = request.patch;
    const next: Controls = { ...current };
    if (p.mode !== undefined) next.mode = p.mode;
    if (p.message !== undefined) next.message = p.message ?? undefined;
    if (p.admitRatePerSecond !== undefined) next.rate = p.admitRatePerSecond ?? undefined;
    if (p.admitBurst !== undefined) next.burst = p.admitBurst;
    if (p.maxActive !== undefined) next.maxActive = p.maxActive;
    if (p.opensAt !== undefined) next.opensAt = p.opensAt ?? undefined;
    if (p.shuffle !== undefined) next.shuffle = p.shuffle;

    // A patch that changes nothing is answered as applied (a re-sent call), writing nothing.
    const fields = ['mode', 'message', 'rate', 'burst', 'maxActive', 'opensAt', 'shuffle'] as const;
    if (fields.every((f) => next[f] === current[f])) return { version: current.version };
    // What only the store can judge (mirrors lua/setControls-2.lua).
    const pendingBefore = beforeOpening(current, now);
    const pendingAfter = beforeOpening(next, now);
    const startsDraw = (p.shuffle !== undefined || p.opensAt !== undefined) && next.shuffle === true && !(pendingBefore && current.shuffle === true);
    if (startsDraw && !pendingAfter) {
      if (next.opensAt !== undefined) throw new WaitgateConfigError('opensAt', 'is in the past: a shuffled pre-queue needs an opening in the future');
      throw new WaitgateConfigError('shuffle', 'needs opensAt in the future (the pre-queue is drawn at opensAt)');
    }
    if (pendingBefore && (current.shuffle === true) !== (next.shuffle === true) && current.preQueueFrom !== undefined && current.scoreBase !== undefined) {
      const preQueued = q.waiting.countBelow(current.scoreBase) - q.waiting.countBelow(current.preQueueFrom);
      if (preQueued > 0) throw new WaitgateConfigError('shuffle', `cannot change once the pre-queue has members (${preQueued} waiting for the opening)`);
    }
    // A committed draw is final: while members drawn with its seed wait, a new draw keeps it.
    const drawnWaiting =
      current.seed !== undefined && current.preQueueFrom !== undefined && current.scoreBase !== undefined
        ? q.waiting.countBelow(current.scoreBase) - q.waiting.countBelow(current.preQueueFrom)
        : 0;
    if (pendingAfter && !pendingBefore) {
      next.preQueueFrom = (current.scoreBase ?? 0) + q.seq + 1;
      next.scoreBase = next.preQueueFrom + DRAW_RANGE;
    }
    if (startsDraw && drawnWaiting > 0) {
      next.seed = current.seed;
      next.commitment = current.commitment;
    } else if (startsDraw) {
      next.seed = request.seed;
      next.commitment = request.commitment;
    } else if (next.shuffle !== true && pendingBefore && current.shuffle === true) {
      next.seed = undefined;
      next.commitment = undefined;
    }
    next.version = current.version + 1;
    q.controls = next;
    return { version: next.version };
  }

  async controls(queue: string): Promise<StoredControls> {
    const c = this.#queue(queue).controls;
    return {
      now: this.#now(),
      mode: c.mode ?? null,
      message: c.message ?? null,
      admitRatePerSecond: c.rate ?? null,
      admitBurst: c.burst ?? null,
      maxActive: c.maxActive,
      opensAt: c.opensAt ?? null,
      shuffle: c.shuffle === true,
      drawSeed: c.seed ?? null,
      drawCommitment: c.commitment ?? null,
      version: c.version,
      adaptiveRate: this.#queue(queue).adaptive?.rate ?? null,
    };
  }

  #queue(name: string): QueueState {
    let q = this.#queues.get(name);
    if (!q) {
      q = {
        seq: 0,
        waiting: new WaitingLine(),
        tokens: new Map(),
        consumed: new Map(),
        bucket: null,
        window: EMPTY_WINDOW,
        recentAdmits: new Map(),
        controls: { version: 0 },
        seen: new Map(),
        totals: { entered: 0, admitted: 0, abandoned: 0, consumed: 0, expired: 0 },
        waitSlots: [],
        entries: new EntryCheckpoints(),
        orders: new OrderWindow(),
        adaptive: null,
        dropBucket: null,
        pace: null,
        headMoves: 0,
        headMoveListeners: new Set(),
      };
      this.#queues.set(name, q);
    }
    return q;
  }

  #snapshot(q: QueueState, memberId: string, now: number): MemberSnapshot {
    const record = q.tokens.get(memberId);
    const ready = record !== undefined && deadlineOf(record) > now;
    const rank = ready ? null : q.waiting.rank(memberId);
    return {
      status: ready ? 'READY' : rank !== null ? 'WAITING' : 'NOT_ENTERED',
      rank,
      totalWaiting: q.waiting.size,
      entryToken: ready ? record.token : null,
      entryTokenExpiresAt: ready ? record.tokenExp : null,
      window: q.window,
      now,
      score: rank === null ? null : q.waiting.seqOf(memberId),
      controls: controlsView(q.controls, q.adaptive?.rate),
    };
  }
}
