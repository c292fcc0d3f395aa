// Polling at scale: ranks estimated from a cached entry sequence and a shared snapshot of
// the line, so a poll costs Redis nothing unless the member is near the head.

import { LANE_SPAN } from './lanes.js';
import { isDrawnBeforeOpening } from './position.js';
import { dropOldest } from './bounded.js';
import type { HeadMovesListener, HeadMovesWatch, MemberSnapshot, QueueSnapshot, Store } from './store/store.js';

/** Starts listening to the queue's admission steps (Store.watchHeadMoves, bound to the queue). */
export type WatchHeadMoves = (listener: HeadMovesListener) => HeadMovesWatch;

/** The key of a WaitingQueue's {@link WatchHeadMoves} (internal; `Symbol.for`: the ESM and CJS builds share it). */
export const WATCH_HEAD_MOVES: unique symbol = Symbol.for('waitgate.watchHeadMoves') as never;

/**
 * `store.watchHeadMoves` bound to the queue `name`, for `owner`'s position cache, or null when
 * the store has none; `owner[report]` hears the failures to subscribe. The store keeps that
 * error handler while the watch runs: it holds `owner` weakly (and is built here, not in the
 * owner's constructor, whose closures share one scope that holds `this`).
 */
export function watchHeadMovesOf<K extends PropertyKey>(
  store: Store,
  name: string,
  owner: Record<K, (error: Error) => void>,
  report: K,
): WatchHeadMoves | null {
  if (!store.watchHeadMoves) return null;
  const reportTo = new WeakRef(owner);
  return (listener) => store.watchHeadMoves!(name, listener, (error) => reportTo.deref()?.[report](error));
}

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
   * An integer, 0–100,000,000. Default: the largest `belowRank` of the polling
   * tiers (0 with a single tier), or ceil(1.25 × (admitBurst + admitRatePerSecond ×
   * refreshMs / 1000)) if that is larger. The first term answers every member of the
   * faster polling tiers exactly; there are at most that many of them, whatever
   * the crowd, so their lookups are bounded (with the default tiers, at most 100
   * polls/s at 1 s plus 900 at 3 s: 400 exact lookups/s per queue). The second is
   * the most members that can be admitted between two snapshot refreshes plus a
   * margin for the estimate's error, so a member who may have been admitted since
   * the snapshot was taken is always asked exactly (assuming every instance runs
   * the same admission options). With the defaults, 1,000.
   */
  exactBelowRank?: number;
}

/** A point of the line: the entry sequence of the member at a rank. */
interface Point {
  rank: number;
  seq: number;
}

/** A snapshot as the cache uses it: the store's reply and the points to interpolate between. */
interface Line {
  value: QueueSnapshot;
  /** Strictly increasing in rank and in seq, from the head (rank 0) to the last member; empty when nobody waits. */
  points: Point[];
}

/** Stops the watch of a cache that was collected, so the store drops its listener (a push would stop it too, but a queue may see none). */
const stopWhenCollected = new FinalizationRegistry<HeadMovesWatch>((watch) => watch.stop());

/** How far back the pace of the head is measured: long enough to span several admission steps. */
const PACE_WINDOW_MS = 2000;

/** An earlier snapshot's points, kept to measure how fast the head moves. */
interface Past {
  /** The store's time of the snapshot. */
  now: number;
  points: Point[];
}

interface Remembered {
  seq: number;
  /** The last rank reported, so an estimate never moves a member back. */
  lastRank: number;
}

/**
 * The rank of a waiting member is the number of members with a lower entry
 * sequence. The snapshot carries points of the line, (rank, seq) pairs: the head
 * (rank 0), ranks 64, 128, 256, … (powers of two) and the last member (see
 * {@link QueueSnapshot.probes}); a store without probes gives only the head and
 * the last member. A member's rank is interpolated linearly between the two points
 * around its sequence: exact at a point and wherever nobody left between the two
 * points, and otherwise off by how unevenly the members who left between those two
 * points spread (never by more than their number). Segments double in length,
 * so from rank 64 on a member at rank r is estimated within a segment no longer
 * than r: the error relative to the rank is at most the share of members who left
 * within that one segment, however long the line. In a drawn pre-queue the scores
 * are random, not one apart, so even with nobody gone the count between two points
 * strays from the straight line by about the square root of the segment's length;
 * there the stores add up to 68 probes (from rank 768, segments of at most
 * (r / 224)² around rank r below 50,000), which keeps the estimate within about 1%
 * from rank 1,000 on. A member whose sequence the head
 * has passed (admitted, or gone), a member estimated below `exactBelowRank`, and a
 * member this instance does not know yet are looked up exactly.
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
  #snapshot: { line: Line; takenAt: number; receivedAt: number; pace: number } | null = null;
  /** Earlier snapshots, oldest first, back to about PACE_WINDOW_MS before the latest. */
  readonly #past: Past[] = [];
  #refreshing: Promise<Line> | null = null;
  readonly #watchHeadMoves: WatchHeadMoves | null;
  #headMovesWatch: HeadMovesWatch | null = null;
  /**
   * The largest count of members taken off the line that a push told since the load of
   * the snapshot in use began (-1: none). Only pushes from then on can tell of steps the
   * snapshot does not show; keeping older ones would keep a count of another generation,
   * or from before a restart that lost writes, for good.
   */
  #heardHeadMoves = -1;
  /** When a push was last heard (performance.now()). */
  #lastPushAt = Number.NEGATIVE_INFINITY;

  /**
   * `watchHeadMoves`: where the store pushes admission steps, the cache listens (from
   * its first snapshot) and counts every step since its snapshot exactly.
   */
  constructor(load: () => Promise<QueueSnapshot>, options: Required<PositionCacheOptions>, watchHeadMoves: WatchHeadMoves | null = null) {
    this.#load = load;
    this.#watchHeadMoves = watchHeadMoves;
    this.#refreshMs = options.refreshMs;
    this.#maxMembers = options.maxMembers;
    this.#exactBelowRank = options.exactBelowRank;
  }

  /** Learns (or forgets) a member's sequence from an exact answer. */
  remember(memberId: string, snapshot: MemberSnapshot): void {
    // A lane member (SPEC §17) is not estimated: the snapshot is the default lane's.
    if (snapshot.status !== 'WAITING' || snapshot.score === null || snapshot.score === undefined || snapshot.rank === null || snapshot.score >= LANE_SPAN) {
      this.#members.delete(memberId);
      return;
    }
    this.#members.delete(memberId); // re-insert: the Map's order is the LRU order
    // A drawn place's rank can still grow until the opening: it is no bound on later estimates.
    const lastRank = isDrawnBeforeOpening(snapshot.score, snapshot.controls, snapshot.now) ? Number.POSITIVE_INFINITY : snapshot.rank;
    this.#members.set(memberId, { seq: snapshot.score, lastRank });
    dropOldest(this.#members, this.#maxMembers);
  }

  forget(memberId: string): void {
    this.#members.delete(memberId);
  }

  /**
   * Drops the snapshot (after `reinitialize()`): the next poll takes a new one. Line
   * changes (enter, admit, leave) do not invalidate it: that would undo the refresh
   * limit under churn; a snapshot is at most `refreshMs` old, and members admitted or
   * gone through this instance are forgotten instead.
   */
  invalidate(): void {
    this.#snapshot = null;
    this.#past.length = 0; // a new generation: the old line says nothing of the new one's pace
    this.#heardHeadMoves = -1; // nor do its counts
  }

  /** An estimated WAITING snapshot, or null when the caller must look the member up exactly. */
  async estimate(memberId: string): Promise<MemberSnapshot | null> {
    // Unknown, or last reported below exactBelowRank (ranks only fall while it stays): exact, no snapshot needed.
    const before = this.#members.get(memberId);
    if (!before || before.lastRank < this.#exactBelowRank) return null;
    const { value: line, points } = await this.#fresh();
    // Read after the await: an exact answer that arrived meanwhile replaced the entry (new lastRank).
    const known = this.#members.get(memberId);
    if (!known) return null;
    const interpolated = interpolate(points, known.seq);
    if (interpolated === null) return null; // not between the head and the last member: admitted, gone, or new to the snapshot
    const growing = isDrawnBeforeOpening(known.seq, line.controls, line.now);
    // The snapshot is up to refreshMs old, and the head has moved on since: without this,
    // every estimate is behind by the members admitted (or dropped) since the snapshot,
    // the same number at any depth.
    const estimate = growing ? interpolated : Math.max(0, interpolated - Math.round(this.#sinceSnapshot()));
    const rank = growing ? estimate : Math.min(estimate, known.lastRank);
    // Near the head: possibly admitted since the snapshot, and least accurate. Ask exactly
    // (the caller's exact answer re-learns the sequence and the last rank).
    if (rank < this.#exactBelowRank) return null;
    if (!growing) known.lastRank = rank;
    // Polled now: to the back of the eviction order (the Map's insertion order is the LRU order).
    this.#members.delete(memberId);
    this.#members.set(memberId, known);
    return {
      status: 'WAITING',
      rank,
      totalWaiting: line.totalWaiting,
      entryToken: null,
      entryTokenExpiresAt: null,
      window: line.window,
      now: line.now,
      score: known.seq,
      ...(line.controls ? { controls: line.controls } : {}),
    };
  }

  /**
   * The members taken off the line since the snapshot was read: counted from the
   * store's pushes while they are heard, and otherwise the head's pace times the
   * snapshot's age. Admission moves the line in steps (at 500/s every 100 ms, 50 at
   * once): a pace spreads each step over the time between steps, so a member just
   * behind the steps is told a rank up to a step away from its own; a count is
   * exact for every step whose push has arrived.
   */
  #sinceSnapshot(): number {
    const snapshot = this.#snapshot;
    if (!snapshot) return 0;
    const counted = snapshot.line.value.headMoves;
    if (counted !== undefined && this.#hearsSteps(snapshot.pace)) return Math.max(0, this.#heardHeadMoves - counted);
    if (snapshot.pace <= 0) return 0;
    return snapshot.pace * Math.min(performance.now() - snapshot.receivedAt, this.#refreshMs);
  }

  /**
   * Whether the pushes can be relied on: the watch is live, and a push was heard lately
   * whenever the head moved lately. A live watch that hears nothing while the head moves
   * (admitters of an older version during a rolling upgrade, an ACL without the
   * channels, a subscription lost without notice) falls back on the pace.
   */
  #hearsSteps(pace: number): boolean {
    if (!this.#headMovesWatch?.live()) return false;
    return pace <= 0 || performance.now() - this.#lastPushAt < PACE_WINDOW_MS + this.#refreshMs;
  }

  /**
   * Members per ms that left the head between an earlier snapshot (about
   * PACE_WINDOW_MS before) and this one: the rank the earlier line gave this one's
   * head. 0 without an earlier snapshot, or when the head is not in it (a drawn
   * pre-queue, where new places can come first; a line that emptied).
   */
  #pace(line: Line): number {
    const now = line.value.now;
    const past = this.#past;
    while (past.length > 1 && past[1]!.now <= now - PACE_WINDOW_MS) past.shift();
    const earlier = past[0];
    past.push({ now, points: line.points });
    if (past.length > 64) past.shift(); // refreshMs below PACE_WINDOW_MS / 64: the window is shorter, still a pace
    const head = line.value.headSeq;
    if (!earlier || head === null || now <= earlier.now) return 0;
    const passed = interpolate(earlier.points, head);
    return passed === null ? 0 : passed / (now - earlier.now);
  }

  /**
   * Listens to the head moves for `cache`, held weakly: the store keeps the listener while
   * the watch runs, and must not keep a cache (nor the queue it loads for) that its owner
   * dropped. Static, so that the listener's scope holds no `this`: a closure created in a
   * method shares one scope with the method's other closures, which hold `this`.
   */
  static #listen(cache: WeakRef<PositionCache>, watchHeadMoves: WatchHeadMoves): HeadMovesWatch {
    const watch: HeadMovesWatch = watchHeadMoves((headMoves) => {
      const self = cache.deref();
      if (!self) return watch.stop();
      if (headMoves > self.#heardHeadMoves) self.#heardHeadMoves = headMoves;
      self.#lastPushAt = performance.now();
    });
    return watch;
  }

  /** The snapshot, refreshed when older than refreshMs; concurrent polls share one refresh. */
  async #fresh(): Promise<Line> {
    const now = performance.now();
    if (this.#snapshot && now - this.#snapshot.takenAt < this.#refreshMs) return this.#snapshot.line;
    if (this.#watchHeadMoves && !this.#headMovesWatch) {
      this.#headMovesWatch = PositionCache.#listen(new WeakRef(this), this.#watchHeadMoves);
      stopWhenCollected.register(this, this.#headMovesWatch);
    }
    if (!this.#refreshing) this.#heardHeadMoves = -1; // see #heardHeadMoves
    this.#refreshing ??= this.#load()
      .then((value) => {
        const line = { value, points: pointsOf(value) };
        this.#snapshot = { line, takenAt: now, receivedAt: performance.now(), pace: this.#pace(line) };
        return line;
      })
      .finally(() => {
        this.#refreshing = null;
      });
    return this.#refreshing;
  }
}

/**
 * The points to interpolate between: the head, the store's probes and the last
 * member, by rank. Probes that are not finite integers within the line, or not
 * strictly increasing in both rank and sequence, are all ignored (a store's bug
 * must not skew estimates): then only the head and the last member are used.
 */
function pointsOf(line: QueueSnapshot): Point[] {
  const { headSeq, lastSeq, totalWaiting } = line;
  if (headSeq === null || lastSeq === null || !(totalWaiting >= 1)) return [];
  const lastRank = totalWaiting - 1;
  const ends: Point[] =
    lastRank === 0 || lastSeq <= headSeq
      ? [{ rank: 0, seq: headSeq }]
      : [
          { rank: 0, seq: headSeq },
          { rank: lastRank, seq: lastSeq },
        ];
  if (!line.probes || line.probes.length === 0) return ends;
  const points: Point[] = [ends[0]!];
  for (const p of [...line.probes, ends[ends.length - 1]!]) {
    const previous = points[points.length - 1]!;
    if (p.rank === previous.rank && p.seq === previous.seq) continue; // the head or the last member, given twice
    const valid = Number.isSafeInteger(p.rank) && Number.isFinite(p.seq) && p.rank > previous.rank && p.rank <= lastRank && p.seq > previous.seq;
    if (!valid) return ends;
    points.push({ rank: p.rank, seq: p.seq });
  }
  return points;
}

/**
 * The rank of a member with sequence `seq`, interpolated between the two points
 * around it; null when `seq` is before the first point or after the last. Strictly
 * between two points, so is the rank (members have distinct sequences).
 */
function interpolate(points: readonly Point[], seq: number): number | null {
  if (points.length === 0 || seq < points[0]!.seq || seq > points[points.length - 1]!.seq) return null;
  // The last point at or before seq.
  let lo = 0;
  let hi = points.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (points[mid]!.seq <= seq) lo = mid;
    else hi = mid - 1;
  }
  const a = points[lo]!;
  const b = points[lo + 1];
  if (a.seq === seq || b === undefined) return a.rank;
  const estimate = Math.round(a.rank + ((seq - a.seq) * (b.rank - a.rank)) / (b.seq - a.seq));
  return Math.min(b.rank - 1, Math.max(a.rank + 1, estimate)); // b.rank > a.rank: never below a.rank
}
