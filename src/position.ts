// From a store's raw member snapshot to the Position a client sees: wait estimate and polling tier.

import { ADMISSION_WINDOW_MS } from './admission-window.js';
import { rateInForce } from './admission-control.js';
import type { AdmissionOptions, PollingTier } from './types.js';
import type { AdmissionWindow, ControlsView, MemberSnapshot } from './store/store.js';
import type { Position } from './types.js';
import { laneShare } from './lanes.js';

/** Seconds between polls for a member at `rank` (READY and NOT_ENTERED members use the first tier). */
export function pollingIntervalFor(rank: number | null, tiers: readonly PollingTier[]): number {
  const r = rank ?? 0;
  const tier = tiers.find((t) => t.belowRank === undefined || r < t.belowRank) ?? tiers[tiers.length - 1]!;
  return tier.seconds;
}

/**
 * How long the line may go without moving (no admission while members wait) before
 * the estimate assumes it slowed down: one admission window, or two admission
 * intervals at the rate planned with if that is longer.
 */
export const STALL_GRACE_MS = ADMISSION_WINDOW_MS;

/**
 * The admission rate to plan with.
 *
 * - The rate in force (pinned by the controls, set by adaptive admission, or the
 *   instance's option), times the pace of the line measured over the recent steps
 *   that left members waiting (`window.pace`: below 1 when maxActive or a slow admitter
 *   held the line back, above 1 when abandoned members ahead were dropped); a change
 *   of the rate counts at once.
 * - While the line is stalled (nothing admitted while members wait, e.g.
 *   `maxActive` is full and nobody orders, or no admitter runs) for longer than the
 *   grace, that rate is scaled by grace ÷ stalled time: the longer the stall, the
 *   slower the line is assumed to be, so a waiting member's estimate only grows
 *   while nothing moves, and never shrinks until the line moves again.
 */
export function effectiveAdmissionRate(window: AdmissionWindow, now: number, rateInForce: number): number {
  let rate = rateInForce * (window.pace ?? 1);
  if (window.movedAt !== undefined && window.movedAt !== null) {
    const grace = Math.max(STALL_GRACE_MS, 2000 / rate);
    const stalledMs = now - window.movedAt;
    if (stalledMs > grace) rate *= grace / stalledMs;
  }
  return rate;
}

/**
 * Seconds until a member at `rank` is admitted: rank ÷ rate, rounded up, and at
 * least 1 — the head of the line (rank 0) waits for the next admission step, so
 * it is never told it waits 0 seconds.
 */
export function estimateWaitSeconds(rank: number, rate: number): number {
  return Math.max(1, Math.ceil(rank / rate));
}

/**
 * A member of a shuffled pre-queue before the opening: its place is drawn, so its rank
 * is not shown, and it can still grow (later entrants may draw places ahead of it).
 */
export function isDrawnBeforeOpening(seq: number | null | undefined, controls: ControlsView | undefined, now: number): boolean {
  return (
    controls !== undefined &&
    controls.shuffle &&
    controls.opensAt !== null &&
    now < controls.opensAt &&
    controls.preQueueFrom !== null &&
    seq !== null &&
    seq !== undefined &&
    seq >= controls.preQueueFrom
  );
}

/** The controls of a store without them: open, no message, nothing scheduled. */
const OPEN: ControlsView = { mode: 'open', message: null, opensAt: null, shuffle: false, preQueueFrom: null, admitRatePerSecond: null };

/**
 * Builds the public Position from a store snapshot and the controls it carries.
 *
 * - Before a scheduled opening, a waiting member is estimated `null` and polls at the
 *   slowest tier's interval, never past the opening; a member of a shuffled pre-queue
 *   has no rank (its place is drawn at the opening).
 * - Paused or closed, a waiting member is estimated `null` (nobody is admitted) and
 *   polls at the slowest tier's interval.
 */
export function buildPosition(
  snapshot: MemberSnapshot,
  options: { admitRatePerSecond: number; admission?: AdmissionOptions },
  tiers: readonly PollingTier[],
): Position {
  const c = snapshot.controls ?? OPEN;
  const waiting = snapshot.status === 'WAITING';
  const ready = snapshot.status === 'READY';
  const beforeOpening = c.opensAt !== null && snapshot.now < c.opensAt;
  const drawn = waiting && isDrawnBeforeOpening(snapshot.score, c, snapshot.now);
  const rank = waiting && !drawn ? snapshot.rank : null;
  const standing = beforeOpening || c.mode === 'paused' || c.mode === 'closed';
  // A member of a lane (or of the default lane beside named ones) moves at its lane's share of the rate.
  const share = laneShare(snapshot.lanes, snapshot.score);
  const slowest = tiers[tiers.length - 1]!.seconds;
  let pollingIntervalSeconds = pollingIntervalFor(rank, tiers);
  if (waiting && standing) pollingIntervalSeconds = slowest;
  if (waiting && beforeOpening) pollingIntervalSeconds = Math.min(slowest, Math.max(1, Math.ceil((c.opensAt! - snapshot.now) / 1000)));
  return {
    status: snapshot.status,
    rank,
    currentTotalWaitingCount: snapshot.totalWaiting,
    estimatedWaitSeconds:
      !waiting || standing || rank === null || share === 0
        ? null
        : estimateWaitSeconds(rank, share * effectiveAdmissionRate(snapshot.window, snapshot.now, rateInForce(c.admitRatePerSecond, c.adaptiveRate, options))),
    pollingIntervalSeconds,
    entryToken: ready ? snapshot.entryToken : null,
    entryTokenExpiresAt: ready ? snapshot.entryTokenExpiresAt : null,
    queueMode: c.mode,
    message: c.message,
    opensAt: beforeOpening ? c.opensAt : null,
    stockLeft: c.stockLeft ?? null,
    likelyServed:
      waiting && rank !== null && c.stockLeft !== undefined && c.stockLeft !== null ? rank < Math.min(c.stockAvailable ?? c.stockLeft, c.stockLeft) : null,
  };
}
