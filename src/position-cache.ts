// Polling at scale: ranks estimated from a cached entry sequence and a shared snapshot of
// the line, so a poll costs Redis nothing unless the member reached the head.

import type { MemberSnapshot, QueueSnapshot } from './types.js';

/** Options of the `positionCache` option of WaitingQueue. */
export interface PositionCacheOptions {
  /** How old the snapshot of the line may be before a poll refreshes it, ms. Default 250. */
  refreshMs?: number;
  /** Members whose entry sequence this instance remembers (least recently polled dropped first). Default 100,000. */
  maxMembers?: number;
}

interface Remembered {
  seq: number;
  /** The last rank reported, so an estimate never moves a member back. */
  lastRank: number;
}

/**
 * The rank of a waiting member is the number of members with a lower entry
 * sequence. With the line's head and last sequence and its length, that is
 * estimated as (seq − head) × density, density = (length − 1) / (last − head):
 * exact when nobody left the line, and off by how unevenly leavers spread
 * otherwise. A member whose sequence the head has passed (admitted, or gone) and
 * a member this instance does not know yet are looked up exactly.
 */
export class PositionCache {
  readonly #load: () => Promise<QueueSnapshot>;
  readonly #refreshMs: number;
  readonly #maxMembers: number;
  readonly #members = new Map<string, Remembered>();
  #snapshot: { value: QueueSnapshot; takenAt: number } | null = null;
  #refreshing: Promise<QueueSnapshot> | null = null;

  constructor(load: () => Promise<QueueSnapshot>, options: Required<PositionCacheOptions>) {
    this.#load = load;
    this.#refreshMs = options.refreshMs;
    this.#maxMembers = options.maxMembers;
  }

  /** Learns (or forgets) a member's sequence from an exact answer. */
  remember(memberId: string, snapshot: MemberSnapshot): void {
    if (snapshot.status !== 'WAITING' || snapshot.seq === null || snapshot.seq === undefined || snapshot.rank === null) {
      this.#members.delete(memberId);
      return;
    }
    this.#members.delete(memberId); // re-insert: the Map's order is the LRU order
    this.#members.set(memberId, { seq: snapshot.seq, lastRank: snapshot.rank });
    if (this.#members.size > this.#maxMembers) this.#members.delete(this.#members.keys().next().value!);
  }

  forget(memberId: string): void {
    this.#members.delete(memberId);
  }

  /** The line changed through this instance (enter, admit, leave): the next poll takes a new snapshot. */
  invalidate(): void {
    this.#snapshot = null;
  }

  /** An estimated WAITING snapshot, or null when the caller must look the member up exactly. */
  async estimate(memberId: string): Promise<MemberSnapshot | null> {
    const known = this.#members.get(memberId);
    if (!known) return null;
    const line = await this.#fresh();
    if (line.headSeq === null || line.lastSeq === null || known.seq < line.headSeq || known.seq > line.lastSeq) return null;
    const density = line.totalWaiting <= 1 || line.lastSeq === line.headSeq ? 1 : (line.totalWaiting - 1) / (line.lastSeq - line.headSeq);
    const estimate = Math.min(line.totalWaiting - 1, Math.max(0, Math.round((known.seq - line.headSeq) * density)));
    const rank = Math.min(estimate, known.lastRank);
    known.lastRank = rank;
    return {
      status: 'WAITING',
      rank,
      totalWaiting: line.totalWaiting,
      entryToken: null,
      entryTokenExpiresAt: null,
      window: line.window,
      now: line.now,
      seq: known.seq,
    };
  }

  /** The snapshot, refreshed when older than refreshMs; concurrent polls share one refresh. */
  async #fresh(): Promise<QueueSnapshot> {
    const now = performance.now();
    if (this.#snapshot && now - this.#snapshot.takenAt < this.#refreshMs) return this.#snapshot.value;
    this.#refreshing ??= this.#load()
      .then((value) => {
        this.#snapshot = { value, takenAt: now };
        return value;
      })
      .finally(() => {
        this.#refreshing = null;
      });
    return this.#refreshing;
  }
}
