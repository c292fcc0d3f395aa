// The safety net (mirrors lua/includes/safetyNet.lua): while nobody waits, the bucket has
// a token, maxActive has room and the stock allows, a new member is let in at once.

import { recordWaits } from '../../queue-figures.js';
import { defaultBurst } from '../../rates.js';
import type { EnterOptions } from '../store.js';
import { refillBucket } from './bucket.js';
import { beforeOpening, deadlineOf, type QueueState } from './state.js';

/** A token issued at once (passthrough or the safety net), already picked up. */
export function issueAtOnce(q: QueueState, memberId: string, now: number, token: string, ttlMs: number): void {
  q.tokens.set(memberId, { token, tokenExp: now + ttlMs, claimId: null, claimExp: 0, pickupBy: 0 });
  q.totals.entered++;
  q.totals.admitted++;
  recordWaits(q.waitSlots, now, [0]);
}

/**
 * Whether the safety net lets this new member in now; if so, takes its bucket token
 * (the caller then issues {@link issueAtOnce}). The control overrides the caller's option.
 */
export function netTakes(q: QueueState, now: number, options: EnterOptions): boolean {
  const net = options.safetyNet;
  const c = q.controls;
  if (!net || options.token === undefined || options.tokenTtlMs === undefined) return false;
  if (!(c.safetyNet ?? net.option) || (c.mode ?? 'open') !== 'open' || beforeOpening(c, now) || q.waiting.size > 0) return false;
  const rate = c.rate ?? q.adaptive?.rate ?? net.ratePerSecond;
  const burst = c.burst ?? net.burst ?? defaultBurst(rate);
  const maxActive = c.maxActive === undefined ? net.maxActive : c.maxActive;
  const { bucket } = refillBucket(q.bucket, now, rate, burst);
  q.bucket = bucket;
  if (bucket.tokens + 1e-9 < 1) return false;
  let inPlay = 0;
  for (const record of q.tokens.values()) if (deadlineOf(record) > now) inPlay++;
  if (maxActive !== null && inPlay >= maxActive) return false;
  if (c.stock !== undefined && c.stock - inPlay <= 0) return false;
  bucket.tokens -= 1;
  if (c.stock !== undefined) q.controls = { ...c, stockAvailable: Math.max(0, c.stock - inPlay - 1) };
  return true;
}
