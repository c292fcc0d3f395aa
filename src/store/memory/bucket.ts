// The admission token bucket (mirrors lua/includes/bucket.lua refillBucket): the admission
// step (./admission.ts) takes its tokens from it, the safety net (./safety-net.ts) one.
// The drop bucket (./admission.ts, mirrors meta dt/dts) refills the same way.

/** The bucket's tokens (an exact double, as meta bt keeps it) and when it was last refilled (mirrors meta bts). */
export interface Bucket {
  tokens: number;
  refilledAt: number;
}

/**
 * The bucket at `now`, refilled at `rate` per second up to `burst`: `bucket` itself
 * (changed in place), or a full one for a new queue (null). A clock that stepped back
 * (now at or before refilledAt) refills nothing. `full`: the bucket is at its burst (a
 * new queue, or the refill reached it), for the pace (stepOffer in src/rates.ts).
 */
export function refillBucket(bucket: Bucket | null, now: number, rate: number, burst: number): { bucket: Bucket; full: boolean } {
  if (bucket === null) return { bucket: { tokens: burst, refilledAt: now }, full: true };
  let full = false;
  if (now > bucket.refilledAt) {
    const refilled = bucket.tokens + ((now - bucket.refilledAt) * rate) / 1000;
    full = refilled >= burst;
    bucket.tokens = Math.min(burst, refilled);
    bucket.refilledAt = now;
  }
  return { bucket, full };
}
