// The admission steps of one instance: how many fresh tokens a step is sent with, a
// second step at once when the store found more admittable, and the request of a step,
// whose rate, burst and drop pace the store resolves from the controls in force.

import { ADMISSION_WINDOW_MS } from './admission-window.js';
import type { QueueConfig } from './options.js';
import { PRESENCE_FLUSH_MS } from './presence.js';
import { MAX_BURST, dropHorizonMs } from './rates.js';
import type { AdmitRequest, AdmitResult } from './store/store.js';
import { newAdmitId } from './tokens.js';

/** Fresh tokens sent with an admit step when nothing suggests more can be admitted. */
export const MIN_ADMIT_TOKENS = 16;

/** What one step gave: its members (each with its token's expiry) and what was admittable. */
export interface StepResult {
  admittable: AdmitResult['admittable'];
  admitted: Array<AdmitResult['admitted'][number] & { expiresAt: number }>;
}

/**
 * The request of one admission step with these fresh tokens: the instance's options,
 * which the store uses only where the controls set nothing (the burst follows the rate
 * in force when it was never set), and the drop horizon from which the store sizes the
 * drop pace for the presence head of the controls in force.
 */
export function admitRequest(c: Omit<QueueConfig, 'store'>, tokens: string[]): AdmitRequest {
  return {
    ratePerSecond: c.admitRatePerSecond,
    burst: c.admitBurst,
    burstFollowsRate: c.burstFollowsRate,
    maxActive: c.maxActive,
    tokenTtlMs: c.entryTokenTtlMs,
    windowMs: ADMISSION_WINDOW_MS,
    admitId: newAdmitId(),
    tokens,
    abandonAfterMs: c.abandonAfterMs,
    holdSilentAfterMs: c.holdSilentAfterMs,
    pickupTimeoutMs: c.pickupTimeoutMs,
    dropHorizonMs: c.abandonAfterMs === null ? null : dropHorizonMs(Math.max(...c.pollingIntervals.map((tier) => tier.seconds)), PRESENCE_FLUSH_MS),
    adaptive: c.admission.mode === 'adaptive' ? c.admission : null,
  };
}

/**
 * The steps of `admit()`. Their work follows what can be admitted, not `admitBurst`: a
 * step is sent with about as many fresh tokens as the last step found admittable (at
 * least 16); when the store finds more admittable, a second step is sent at once with
 * exactly that many.
 */
export class AdmissionSteps {
  readonly #config: Omit<QueueConfig, 'store'>;
  readonly #step: (count: number) => Promise<StepResult>;
  readonly #report: (error: Error) => void;
  /** What the last admission step found admittable: the next one sends about that many tokens. */
  #lastAdmittable = 0;

  constructor(config: Omit<QueueConfig, 'store'>, step: (count: number) => Promise<StepResult>, report: (error: Error) => void) {
    this.#config = config;
    this.#step = step;
    this.#report = report;
  }

  /** One or two steps; the members admitted, in FIFO order. */
  async admit(): Promise<StepResult['admitted']> {
    const c = this.#config;
    // A burst that follows the rate can be as large as the rate an operator sets.
    const sent = Math.min(c.burstFollowsRate ? MAX_BURST : c.admitBurst, Math.max(MIN_ADMIT_TOKENS, Math.ceil(this.#lastAdmittable * 1.25)));
    const first = await this.#step(sent);
    // A custom store that does not say what was admittable gets the whole burst each time, as before.
    this.#lastAdmittable = first.admittable ?? c.admitBurst;
    // Only a step that used every token it was sent can have left admittable members
    // behind: one that admitted fewer ran out of live members (members held at the head
    // count as waiting in `admittable` but take no admission) or of drops.
    const more = first.admitted.length < sent ? 0 : (first.admittable ?? 0) - first.admitted.length;
    if (more <= 0) return first.admitted;
    try {
      const second = await this.#step(more);
      return [...first.admitted, ...second.admitted];
    } catch (error) {
      // The first step's members hold tokens: they are returned and announced; the
      // second step's failure is reported (a repeat is safe: the bucket bounds it).
      this.#report(error instanceof Error ? error : new Error(String(error)));
      return first.admitted;
    }
  }
}
