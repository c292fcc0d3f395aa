// Read-only views of a queue (mirrors lua/stats-5.lua, inspect-5.lua and
// queueSnapshot-2.lua): the figures, one member in detail, the shape of the line.

import type { MemberInspection } from '../../types.js';
import type { QueueSnapshot, StatsSnapshot } from '../store.js';
import type { WaitingLine } from '../waiting-line.js';
import { controlsView, deadlineOf, type QueueState } from './state.js';
import { laneStats } from '../../lanes.js';
import { laneOf, laneWaiting } from './lanes.js';

export function stats(q: QueueState, now: number): StatsSnapshot {
  let active = 0;
  let claimed = 0;
  for (const record of q.tokens.values()) {
    if (deadlineOf(record) > now) active++;
    if (record.claimId !== null && record.claimExp > now) claimed++;
  }
  const waiting = q.waiting.size + laneWaiting(q);
  const snapshot: StatsSnapshot = {
    waiting,
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
  const l = q.lanes;
  if (l)
    snapshot.lanes = laneStats(
      l.lanes,
      waiting,
      l.lines.map((line) => line.size),
      l.usesLeft,
    );
  return snapshot;
}

export function inspect(q: QueueState, now: number, memberId: string): Omit<MemberInspection, 'memberId'> {
  const record = q.tokens.get(memberId);
  const base = { totalWaiting: q.waiting.size + laneWaiting(q), now, rank: null, tokenExpiresAt: null, leaseExpiresAt: null, pickupBy: null, lastSeenAt: null };
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
  // A member of a lane: its rank counts its own lane.
  const rank = q.waiting.rank(memberId) ?? laneOf(q, memberId)?.line.rank(memberId) ?? null;
  if (rank === null) return { ...base, status: 'NOT_ENTERED' };
  return { ...base, status: 'WAITING', rank, lastSeenAt: q.seen.get(memberId) ?? null };
}

export function queueSnapshot(q: QueueState, now: number): QueueSnapshot {
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
    now,
    probes: rankProbes(q.waiting, band),
    controls: controlsView(q.controls, q.adaptive?.rate),
    headMoves: q.headMoves,
  };
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
