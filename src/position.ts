// From a store's raw member snapshot to the Position a client sees: wait estimate and polling tier.

import { observedRate } from './admission-window.js';
import type { PollingTier } from './options.js';
import type { AdmissionWindow, MemberSnapshot, Position } from './types.js';

/** Seconds between polls for a member at `rank` (READY and NOT_ENTERED members use the first tier). */
export function pollingIntervalFor(rank: number | null, tiers: readonly PollingTier[]): number {
  const r = rank ?? 0;
  const tier = tiers.find((t) => t.belowRank === undefined || r < t.belowRank) ?? tiers[tiers.length - 1]!;
  return tier.seconds;
}

/**
 * The admission rate to plan with: the one observed lately, never above the
 * configured rate (bursts do not raise the long-run rate), or the configured
 * rate when nothing was admitted lately.
 */
export function effectiveAdmissionRate(window: AdmissionWindow, now: number, configuredRate: number): number {
  const observed = observedRate(window, now);
  return observed > 0 ? Math.min(observed, configuredRate) : configuredRate;
}

/** Builds the public Position from a store snapshot. */
export function buildPosition(snapshot: MemberSnapshot, configuredRate: number, tiers: readonly PollingTier[]): Position {
  const waiting = snapshot.status === 'WAITING';
  const ready = snapshot.status === 'READY';
  const rank = waiting ? snapshot.rank : null;
  return {
    status: snapshot.status,
    rank,
    currentTotalWaitingCount: snapshot.totalWaiting,
    estimatedWaitSeconds:
      rank === null ? null : Math.ceil(rank / effectiveAdmissionRate(snapshot.window, snapshot.now, configuredRate)),
    pollingIntervalSeconds: pollingIntervalFor(rank, tiers),
    entryToken: ready ? snapshot.entryToken : null,
    entryTokenExpiresAt: ready ? snapshot.entryTokenExpiresAt : null,
  };
}
