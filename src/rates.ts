// What every instance derives from the rate and burst in force: the burst that follows
// the rate, the presence head, the drop pace and the pace of the line the wait estimate
// plans with. They are computed from the controls the store holds (pinned, adaptive or
// the options), never from a value one instance happens to remember, so an instance that
// only admits behaves exactly like one that also answers polls. lua/includes/ratesInForce.lua,
// pace.lua and tokenRecord.lua do the same in Redis (test/store/redis-rules.test.ts compares them).

import { rateInForce } from './admission-control.js';
import type { ControlsView } from './store/store.js';
import type { AdmissionOptions } from './types.js';

/** The largest burst (lua/includes/ratesInForce.lua MAX_BURST). */
export const MAX_BURST = 10_000;

/** The burst in force when `admitBurst` was never set: one second of the rate in force. */
export function defaultBurst(ratePerSecond: number): number {
  return Math.min(MAX_BURST, Math.max(1, Math.floor(ratePerSecond)));
}

/**
 * The burst in force: the one the controls set; else, when `admitBurst` was never set,
 * one second of the rate in force; else `admitBurst`.
 */
export function burstInForce(stored: number | null | undefined, ratePerSecond: number, options: { admitBurst: number; burstFollowsRate?: boolean }): number {
  if (stored !== null && stored !== undefined) return stored;
  return options.burstFollowsRate ? defaultBurst(ratePerSecond) : options.admitBurst;
}

/**
 * How far from the head a waiting member's calls are recorded as signs of life: twice
 * what can be admitted within `abandonAfterMs` (a full bucket plus the rate over that
 * time). A member further back costs nothing; it crosses this line, and polls, many
 * times before it can be admitted.
 */
export function presenceHead(ratePerSecond: number, burst: number, abandonAfterMs: number): number {
  return Math.ceil(2 * (burst + (ratePerSecond * abandonAfterMs) / 1000));
}

/**
 * The presence head of `controls` (as read with an answer; the options where a store
 * shows none): from the rate and burst in force. Undefined when abandonment is off.
 */
export function presenceHeadOf(
  config: { abandonAfterMs: number | null; admitRatePerSecond: number; admitBurst: number; burstFollowsRate?: boolean; admission?: AdmissionOptions },
  controls: ControlsView | undefined,
): number | undefined {
  if (config.abandonAfterMs === null) return undefined;
  const rate = rateInForce(controls?.admitRatePerSecond, controls?.adaptiveRate, config);
  return presenceHead(rate, burstInForce(controls?.admitBurst, rate, config), config.abandonAfterMs);
}

/**
 * How long drops must take to carry the line across the presence head: the time a live
 * member there takes to be seen, twice over (its slowest polling interval with +20%
 * jitter, plus a flush of signs of life). The store divides the presence head it
 * computes from the rate in force by it: that is the drop pace.
 */
export function dropHorizonMs(slowestPollingSeconds: number, flushMs: number): number {
  return 2 * (slowestPollingSeconds * 1.2 * 1000 + flushMs);
}

/**
 * A READY answer is recorded as a pick-up at its instance's next flush of signs of life
 * (up to a second later): a token read just before its pick-up deadline is kept this
 * much longer, so that the record still finds it (lua/includes/tokenRecord.lua).
 */
export const PICKUP_GRACE_MS = 2000;

/** How long a step's weight lasts in the pace of the line (lua/includes/pace.lua). */
export const PACE_MEMORY_MS = 10_000;
/** A step offers at most this long of the rate: a longer gap is a stalled admitter (the stall rule of the estimate). */
export const MAX_STEP_GAP_MS = 5000;
/** The factor is published once the counted steps offered this many tokens (decayed); before, the estimate plans with the rate in force alone. */
export const MIN_PACE_EVIDENCE = 1;

/** The tokens the rate in force offered since the last admission step (lua/includes/pace.lua stepOffered). */
export function stepOffered(ratePerSecond: number, lastStepAt: number, now: number): number {
  return (ratePerSecond * Math.max(0, Math.min(MAX_STEP_GAP_MS, now - lastStepAt))) / 1000;
}
const MIN_PACE = 0.05;
const MAX_PACE = 20;
const PACE_SNAP = 0.02;

/** The pace of the line: members moved and tokens the rate offered in the steps that left members waiting, decayed. */
export interface Pace {
  moved: number;
  offered: number;
  /** The last admission step (store clock, ms): every step updates it. */
  at: number;
  /** moved / offered within [0.05, 20]: the line's pace per unit of the rate in force. */
  factor: number;
}

/** What a step offered (lua/includes/pace.lua stepOffer): see there. */
export function stepOffer(admitted: number, whole: number, full: boolean, ratePerSecond: number, lastStepAt: number, now: number): number {
  if (admitted >= whole && !full) return admitted;
  return Math.max(admitted, stepOffered(ratePerSecond, lastStepAt, now));
}

/**
 * The pace after a step that took `stepMoved` members off the line (admitted or
 * dropped) while the rate offered `offeredNow` tokens since the step before
 * ({@link stepOffered}; both 0 for a step that does not count, which only decays):
 * below 1, maxActive, the drop bucket or a slow admitter held the line back; above 1,
 * abandoned members ahead made it move faster.
 */
export function nextPace(previous: Pace | null, now: number, stepMoved: number, offeredNow: number): Pace {
  const keep = previous === null ? 0 : now > previous.at ? Math.exp(-(now - previous.at) / PACE_MEMORY_MS) : 1;
  const moved = (previous?.moved ?? 0) * keep + stepMoved;
  const offered = (previous?.offered ?? 0) * keep + offeredNow;
  // Six significant digits, as the script stores it (%.6g): both stores estimate alike.
  const raw = offered > 0 ? Math.min(MAX_PACE, Math.max(MIN_PACE, moved / offered)) : 1;
  // Within PACE_SNAP of 1 the line moves at the rate (whole tokens against a fractional refill).
  const factor = Math.abs(raw - 1) < PACE_SNAP ? 1 : sixDigits(raw);
  return { moved, offered, at: now, factor };
}

/**
 * A factor within [MIN_PACE, MAX_PACE] to six significant digits as C's %.6g rounds it:
 * on an exact tie (65 / 64 = 1.015625) to the even digit, where toPrecision rounds up.
 */
function sixDigits(x: number): number {
  // The exact decimal value of x: a double of at least 2^-5 has at most 57 decimals.
  const digits = x.toFixed(60).replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  const tieToEven = digits.length === 7 && digits[6] === '5' && Number(digits[5]) % 2 === 0;
  // Just below the tie, x rounds down to the even digit (1e-9 is far inside half a unit).
  return Number((tieToEven ? x * (1 - 1e-9) : x).toPrecision(6));
}
