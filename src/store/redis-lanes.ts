// Invite codes and lanes in Redis replies (SPEC §17, lua/includes/lanes.lua): what the
// position scripts' shared part and lua/stats-5.lua add while a queue keeps lanes.

import { laneStats, parseLanes, type LaneStats } from '../lanes.js';
import type { MemberSnapshot } from './store.js';

/** A script's reply (as redis-replies.ts reads them). */
type Reply = ReadonlyArray<string | number | null>;

/**
 * lua/includes/readPosition.lua sharedReply past its fixed part (`fixedLength` values):
 * ln and the members waiting in the lanes, only while the queue keeps lanes. Adds them
 * to a member's snapshot (its total counted the default lane only).
 */
export function withSharedLanes(snapshot: MemberSnapshot, shared: Reply, fixedLength: number): MemberSnapshot {
  if (shared.length <= fixedLength || snapshot.needsToken) return snapshot;
  snapshot.lanes = parseLanes(String(shared[fixedLength]));
  snapshot.totalWaiting += Number(shared[fixedLength + 1]);
  return snapshot;
}

/** lua/stats-5.lua past cr and ar (from `at`): ln, then per lane its waiting and its codes' uses left; undefined without lanes. */
export function decodeStatsLanes(r: Reply, at: number, waiting: number): LaneStats[] | undefined {
  const ln = r[at];
  if (typeof ln !== 'string' || ln === '') return undefined;
  const lanes = parseLanes(ln);
  const counts = lanes.map((_, i) => Number(r[at + 1 + 2 * i] ?? 0));
  const usesLeft = lanes.map((_, i) => Number(r[at + 2 + 2 * i] ?? 0));
  return laneStats(lanes, waiting, counts, usesLeft);
}
