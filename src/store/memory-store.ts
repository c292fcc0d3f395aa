// MemoryStore: the same semantics as RedisStore, in process, with an injectable clock.

import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { EMPTY_WINDOW, recordAdmissionStep } from '../admission-window.js';
import { parseStrict } from '../options.js';
import type {
  AdmissionWindow,
  AdmitRequest,
  AdmitResult,
  ClaimRequest,
  ClaimResult,
  ConsumeRequest,
  MemberSnapshot,
  QueueSnapshot,
  SettleRequest,
  StatsSnapshot,
  Store,
} from './store.js';
import { WaitingLine } from './waiting-line.js';

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
}

/** How long an admit id is remembered (as the Lua script does). */
const ADMIT_ID_MEMORY_MS = 300_000;

const optionsSchema = z.strictObject({
  now: z.custom<() => number>((f) => typeof f === 'function', 'must be a function returning epoch milliseconds').optional(),
});

/** The moment a token stops existing: its TTL, pushed out by a live claim's lease. */
function deadlineOf(r: TokenRecord): number {
  return r.claimId !== null && r.claimExp > r.tokenExp ? r.claimExp : r.tokenExp;
}

function sameToken(a: string, b: string): boolean {
  // Equal-length digests, compared in constant time: nothing leaks about the stored token.
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/** The rank probes of lua/queueSnapshot-2.lua: ranks 0, 64, 128, 256, … while below size − 1, and size − 1. */
function rankProbes(line: WaitingLine): Array<{ rank: number; seq: number }> {
  const probes: Array<{ rank: number; seq: number }> = [];
  const lastRank = line.size - 1;
  if (lastRank < 0) return probes;
  probes.push({ rank: 0, seq: line.seqAtRank(0)! });
  for (let rank = 64; rank < lastRank; rank *= 2) probes.push({ rank, seq: line.seqAtRank(rank)! });
  if (lastRank > 0) probes.push({ rank: lastRank, seq: line.seqAtRank(lastRank)! });
  return probes;
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

  constructor(options: MemoryStoreOptions = {}) {
    this.#now = parseStrict(optionsSchema, options).now ?? Date.now;
  }

  /** `options.notAfter` is not needed here: an in-process call cannot arrive late. */
  async enter(queue: string, memberId: string, _options?: { notAfter?: number }): Promise<MemberSnapshot> {
    const q = this.#queue(queue);
    const now = this.#now();
    const record = q.tokens.get(memberId);
    if (record && deadlineOf(record) <= now) q.tokens.delete(memberId);
    if (!q.tokens.has(memberId) && !q.waiting.has(memberId)) q.waiting.push(memberId, ++q.seq);
    return this.#snapshot(q, memberId, now);
  }

  async position(queue: string, memberId: string): Promise<MemberSnapshot> {
    return this.#snapshot(this.#queue(queue), memberId, this.#now());
  }

  async admit(queue: string, request: AdmitRequest): Promise<AdmitResult> {
    const q = this.#queue(queue);
    const now = this.#now();
    const expiresAt = now + request.tokenTtlMs;
    for (const [member, record] of q.tokens) if (deadlineOf(record) <= now) q.tokens.delete(member);
    const active = q.tokens.size;
    for (const [id, forgetAt] of q.recentAdmits) if (forgetAt <= now) q.recentAdmits.delete(id);
    if (q.recentAdmits.has(request.admitId)) return { expiresAt, active, admitted: [], admittable: 0 };

    const bucket = q.bucket ?? { tokens: request.burst, refilledAt: now };
    if (now > bucket.refilledAt) {
      bucket.tokens = Math.min(request.burst, bucket.tokens + ((now - bucket.refilledAt) * request.ratePerSecond) / 1000);
      bucket.refilledAt = now;
    }
    const waitingBefore = q.waiting.size;
    let admittable = Math.min(Math.floor(bucket.tokens + 1e-9), request.burst, waitingBefore);
    if (request.maxActive !== null) admittable = Math.min(admittable, request.maxActive - active);
    admittable = Math.max(0, admittable);
    const n = Math.min(admittable, request.tokens.length);

    const admitted = q.waiting.shift(n).map((memberId, i) => {
      const entryToken = request.tokens[i]!;
      q.tokens.set(memberId, { token: entryToken, tokenExp: expiresAt, claimId: null, claimExp: 0 });
      return { memberId, entryToken };
    });
    bucket.tokens -= n;
    q.bucket = bucket;
    q.window = recordAdmissionStep(q.window, n, waitingBefore, now, request.windowMs);
    q.recentAdmits.set(request.admitId, now + ADMIT_ID_MEMORY_MS);
    return { expiresAt, active: active + n, admitted, admittable };
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
    return true;
  }

  async release(queue: string, request: SettleRequest): Promise<boolean> {
    const q = this.#queue(queue);
    const record = q.tokens.get(request.memberId);
    if (!record || record.claimId !== request.claimId || deadlineOf(record) <= this.#now()) return false;
    record.claimId = null;
    record.claimExp = 0;
    return true;
  }

  async leave(queue: string, memberId: string): Promise<boolean> {
    const q = this.#queue(queue);
    const wasWaiting = q.waiting.remove(memberId);
    const record = q.tokens.get(memberId);
    const hadToken = record !== undefined && deadlineOf(record) > this.#now();
    q.tokens.delete(memberId);
    return wasWaiting || hadToken;
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
    return { waiting: q.waiting.size, active, claimed, window: q.window, now };
  }

  async queueSnapshot(queue: string): Promise<QueueSnapshot> {
    const q = this.#queue(queue);
    const { head, last } = q.waiting.ends();
    return { totalWaiting: q.waiting.size, headSeq: head, lastSeq: last, window: q.window, now: this.#now(), probes: rankProbes(q.waiting) };
  }

  #queue(name: string): QueueState {
    let q = this.#queues.get(name);
    if (!q) {
      q = { seq: 0, waiting: new WaitingLine(), tokens: new Map(), consumed: new Map(), bucket: null, window: EMPTY_WINDOW, recentAdmits: new Map() };
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
      seq: rank === null ? null : q.waiting.seqOf(memberId),
    };
  }
}
