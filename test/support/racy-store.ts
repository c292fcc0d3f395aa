// RacyStore: a deliberately non-atomic store, to show that the store contract's
// concurrency tests can fail (test/store/racy-store.test.ts).
//
// MemoryStore runs each operation as one synchronous step, so concurrent calls never
// interleave on it and a concurrency test run against it alone proves nothing about its
// power to catch a race. RacyStore has MemoryStore's semantics for calls made one at a
// time (the rest of the contract passes on it), but enter, admit and claim are the naive
// check-then-act designs the README's table lists as holes: each reads state, yields
// (a macrotask, so every call dispatched together reads before any writes), then writes
// what it decided from that now stale read:
// - enter: "is the member absent?", then adds it as new (a ZADD without NX: a member
//   added meanwhile is sequenced again, at the back), and reports as its rank the number
//   waiting when it looked;
// - admit: reads the token bucket, then pops what the bucket allowed and writes the
//   bucket back from the old read (a lost update: concurrent admits all spend one bucket);
// - claim: "does anyone hold a live lease?", then takes the token even if another
//   request claimed it meanwhile.
// Every other operation is MemoryStore's.

import { MemoryStore, type Store } from '../../src/index.js';

type StoreParams<M extends keyof Store> = Parameters<NonNullable<Store[M]>>;
type StoreResult<M extends keyof Store> = ReturnType<NonNullable<Store[M]>>;

/** Lets every other call dispatched in this turn of the event loop run up to its own yield. */
const interleave = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A bucket the inner MemoryStore never runs out of: RacyStore keeps the real one itself. */
const UNLIMITED = 1e9;

export class RacyStore implements Store {
  readonly #inner: MemoryStore;
  readonly #now: () => number;
  /** queue -> token bucket, as MemoryStore keeps it. */
  readonly #buckets = new Map<string, { tokens: number; refilledAt: number }>();
  /** queue NUL member -> the last claim taken through this store and its lease end. */
  readonly #holders = new Map<string, { claimId: string; leaseExp: number }>();

  constructor(options: { now?: () => number } = {}) {
    this.#now = options.now ?? Date.now;
    this.#inner = new MemoryStore({ now: this.#now });
  }

  async enter(...[queue, memberId, options]: StoreParams<'enter'>): StoreResult<'enter'> {
    const seen = await this.#inner.position(queue, memberId); // check
    if (seen.status !== 'NOT_ENTERED') return this.#inner.enter(queue, memberId, options);
    await interleave();
    await this.#inner.leave(queue, memberId); // act as if still absent: a member added meanwhile goes to the back
    const snapshot = await this.#inner.enter(queue, memberId, options);
    return snapshot.status === 'WAITING' ? { ...snapshot, rank: seen.totalWaiting, totalWaiting: seen.totalWaiting + 1 } : snapshot;
  }

  async admit(...[queue, request]: StoreParams<'admit'>): StoreResult<'admit'> {
    const now = this.#now();
    const read = this.#buckets.get(queue) ?? { tokens: request.burst, refilledAt: now }; // check
    let { tokens, refilledAt } = read;
    if (now > refilledAt) {
      tokens = Math.min(request.burst, tokens + ((now - refilledAt) * request.ratePerSecond) / 1000);
      refilledAt = now;
    }
    const allowed = Math.max(0, Math.min(Math.floor(tokens + 1e-9), request.burst));
    await interleave();
    const result = await this.#inner.admit(queue, { ...request, ratePerSecond: UNLIMITED, burst: UNLIMITED, tokens: request.tokens.slice(0, allowed) });
    this.#buckets.set(queue, { tokens: tokens - result.admitted.length, refilledAt }); // written back from the old read
    return result.admittable === undefined ? result : { ...result, admittable: Math.min(result.admittable, allowed) };
  }

  async claim(...[queue, request]: StoreParams<'claim'>): StoreResult<'claim'> {
    const key = `${queue}\u0000${request.memberId}`;
    const held = this.#holders.get(key); // check
    const free = !held || held.claimId === request.claimId || held.leaseExp <= this.#now();
    await interleave();
    let result = await this.#inner.claim(queue, request);
    const current = this.#holders.get(key);
    if (result.status === 'IN_USE' && free && current) {
      // Claimed by another request since the check: take it anyway.
      await this.#inner.release(queue, { memberId: request.memberId, claimId: current.claimId });
      result = await this.#inner.claim(queue, request);
    }
    if (result.status === 'CLAIMED') this.#holders.set(key, { claimId: request.claimId, leaseExp: result.expiresAt });
    return result;
  }

  position(...args: StoreParams<'position'>): StoreResult<'position'> {
    return this.#inner.position(...args);
  }

  consume(...args: StoreParams<'consume'>): StoreResult<'consume'> {
    return this.#inner.consume(...args);
  }

  release(...args: StoreParams<'release'>): StoreResult<'release'> {
    return this.#inner.release(...args);
  }

  leave(...args: StoreParams<'leave'>): StoreResult<'leave'> {
    return this.#inner.leave(...args);
  }

  stats(...args: StoreParams<'stats'>): StoreResult<'stats'> {
    return this.#inner.stats(...args);
  }

  queueSnapshot(...args: StoreParams<'queueSnapshot'>): StoreResult<'queueSnapshot'> {
    return this.#inner.queueSnapshot(...args);
  }
}
