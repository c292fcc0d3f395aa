// Adaptive admission (the `admission: { mode: 'adaptive' }` option): the control law
// that sets the admission rate from the health of the order path, and the order
// window it reads. lua/includes/orderHealth.lua and lua/popAndIssue-9.lua do the same
// in Redis; MemoryStore uses this file, so both stores move the rate alike.
//
// The law is AIMD with a latency gradient on the way down, evaluated at most once a
// second from the orders settled in the last 2–4 s:
// - failures (releases and lapsed leases) above 10% of the orders: the rate × 0.8;
// - else orders slower than the target on average: the rate × target / latency,
//   within [0.5, 0.9] (the slower, the steeper, as a gradient controller does);
// - else, healthy orders: the rate + max / 25;
// - no orders settled lately (paused, before an opening, nobody ordering): the rate holds;
// always within [min, max]. Why: the decrease is multiplicative and proportional to
// how far off the orders are, so an overloaded database sheds load within seconds
// (orders at 4x the target halve the rate each second); the increase is additive
// and gentler (from any rate to 90% of max in at most 23 s), so recovery probes
// without overshooting. Means, not percentiles: a handful of orders a second is enough.

import type { AdmissionOptions } from './types.js';

export const ORDER_WINDOW_MS = 2000;
export const EVALUATE_EVERY_MS = 1000;
const FAILURE_SHARE = 0.1;
const DECREASE_ON_FAILURE = 0.8;
const MIN_DECREASE = 0.5;
const MAX_DECREASE = 0.9;
const INCREASE_STEPS = 25;

interface OrderCounts {
  count: number;
  failed: number;
  latency: number;
  samples: number;
}

const none = (): OrderCounts => ({ count: 0, failed: 0, latency: 0, samples: 0 });

/** Orders settled lately: two fixed windows read as one (mirrors meta ows .. opn). */
export class OrderWindow {
  #start: number | null = null;
  #current = none();
  #previous = none();

  /** Records settled orders at `now`. */
  record(now: number, orders: OrderCounts): void {
    this.#rotate(now);
    const c = this.#current;
    this.#current = { count: c.count + orders.count, failed: c.failed + orders.failed, latency: c.latency + orders.latency, samples: c.samples + orders.samples };
  }

  /** The current window and the one before it, as of `now`. */
  read(now: number): OrderCounts {
    this.#rotate(now);
    const [c, p] = [this.#current, this.#previous];
    return { count: c.count + p.count, failed: c.failed + p.failed, latency: c.latency + p.latency, samples: c.samples + p.samples };
  }

  #rotate(now: number): void {
    const start = this.#start ?? now;
    if (now - start >= 2 * ORDER_WINDOW_MS) {
      this.#start = now;
      this.#current = none();
      this.#previous = none();
    } else if (now - start >= ORDER_WINDOW_MS) {
      this.#start = start + ORDER_WINDOW_MS;
      this.#previous = this.#current;
      this.#current = none();
    } else {
      this.#start = start;
    }
  }
}

/** The law: the next rate in force from the current one and the orders settled lately. */
export function nextRate(inForce: number, orders: OrderCounts, limits: { targetLatencyMs: number; minRatePerSecond: number; maxRatePerSecond: number }): number {
  let rate = inForce;
  if (orders.count > 0 && orders.failed / orders.count > FAILURE_SHARE) {
    rate *= DECREASE_ON_FAILURE;
  } else if (orders.samples > 0 && orders.latency / orders.samples > limits.targetLatencyMs) {
    rate *= Math.max(MIN_DECREASE, Math.min(MAX_DECREASE, limits.targetLatencyMs / (orders.latency / orders.samples)));
  } else if (orders.count > 0) {
    rate += limits.maxRatePerSecond / INCREASE_STEPS;
  }
  return Math.min(limits.maxRatePerSecond, Math.max(limits.minRatePerSecond, rate));
}

/**
 * The admission rate in force: the one the controls pin; else, with adaptive
 * admission, the one it set (or the starting rate: `admitRatePerSecond` clamped to
 * the bounds); else `admitRatePerSecond`.
 */
export function rateInForce(pinned: number | null | undefined, adaptive: number | null | undefined, options: { admitRatePerSecond: number; admission?: AdmissionOptions }): number {
  if (pinned !== null && pinned !== undefined) return pinned;
  const admission = options.admission;
  if (admission?.mode !== 'adaptive') return options.admitRatePerSecond;
  return adaptive ?? Math.min(admission.maxRatePerSecond, Math.max(admission.minRatePerSecond, options.admitRatePerSecond));
}
