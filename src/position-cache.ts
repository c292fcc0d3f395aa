// Polling at scale: ranks estimated from a cached entry sequence and a shared snapshot of
// the line, so a poll costs Redis nothing unless the member is near the head.

import type { MemberSnapshot, QueueSnapshot } from './types.js';

/** Options of the `positionCache` option of WaitingQueue. */
export interface PositionCacheOptions {
  /** How old the snapshot of the line may be before a poll refreshes it, ms. Default 250. */
  refreshMs?: number;
  /** Members whose entry sequence this instance remembers (least recently polled dropped first). Default 100,000. */
  maxMembers?: number;
  /**
   * A member whose estimated rank is below this is looked up exactly: one store
   * call per poll, as without the cache. Near the head, where a member can be
   * admitted by another instance at any moment and where an estimate is least
   * accurate relative to the rank after leaves, the status and the rank are then
   * exact, and READY is seen on the first poll after the admission. The trade:
   * higher means more store calls per poll (about one per poll of each member
   * below it) for exact, fresh answers over more of the line; 0 estimates every
   * member this instance knows, and a member admitted by another instance can be
   * told WAITING until this instance's snapshot is older than `refreshMs`.
   * Further back, a member who left through another instance is still estimated
   * as WAITING until it would have come below this rank.
   *
   * An integer, 0–100,000,000. Default: the first polling tier's `belowRank` (0 if
   * it has none), or ceil(1.25 × (admitBurst + admitRatePerSecond × refreshMs / 1000))
   * if that is larger: the most members that can be admitted between two snapshot
   * refreshes plus a margin for the estimate's error, so a member who may have been
   * admitted since the snapshot was taken is always asked exactly (assuming every
   * instance runs the same admission options). With the defaults, 100.
   */
  exactBelowRank?: number;
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
 * otherwise. A member whose sequence the head has passed (admitted, or gone), a
 * member estimated below `exactBelowRank`, and a member this instance does not
 * know yet are looked up exactly.
 *
 * A rank reported to a member who stays never grows: an estimate is at most the
 * last rank reported (estimated or exact). An exact answer is reported as it is.
 */
export class PositionCache {
  readonly #load: () => Promise<QueueSnapshot>;
  readonly #refreshMs: number;
  readonly #maxMembers: number;
  readonly #exactBelowRank: number;
  readonly #members = new Map<string, Remembered>();
  #snapshot: { value: QueueSnapshot; takenAt: number } | null = null;
  #refreshing: Promise<QueueSnapshot> | null = null;

  constructor(load: () => Promise<QueueSnapshot>, options: Required<PositionCacheOptions>) {
    this.#load = load;
    this.#refreshMs = options.refreshMs;
    this.#maxMembers = options.maxMembers;
    this.#exactBelowRank = options.exactBelowRank;
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
    // Unknown, or last reported below exactBelowRank (ranks only fall while it stays): exact, no snapshot needed.
    const before = this.#members.get(memberId);
    if (!before || before.lastRank < this.#exactBelowRank) return null;
    const line = await this.#fresh();
    // Read after the await: an exact answer that arrived meanwhile replaced the entry (new lastRank).
    const known = this.#members.get(memberId);
    if (!known) return null;
    if (line.headSeq === null || line.lastSeq === null || known.seq < line.headSeq || known.seq > line.lastSeq) return null;
    const density = line.totalWaiting <= 1 || line.lastSeq === line.headSeq ? 1 : (line.totalWaiting - 1) / (line.lastSeq - line.headSeq);
    const estimate = Math.min(line.totalWaiting - 1, Math.max(0, Math.round((known.seq - line.headSeq) * density)));
    const rank = Math.min(estimate, known.lastRank);
    // Near the head: possibly admitted since the snapshot, and least accurate. Ask exactly
    // (the caller's exact answer re-learns the sequence and the last rank).
    if (rank < this.#exactBelowRank) return null;
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
