// When the waiting page opens its event stream again after a failure (room.ts): doubling from
// 1 s up to a minute, each delay spread ±50% so that a crowd cut off at once (an instance
// restarting, a proxy dropping its connections) does not come back in step. The page polls
// meanwhile.

/** The longest wait between two attempts, ms. */
export const MAX_RECONNECT_MS = 60_000;

/** The wait before attempt `failures + 1` to open the stream, ms (`failures` in a row so far, from 0). */
export function reconnectDelayMs(failures: number, random: () => number = Math.random): number {
  const base = Math.min(MAX_RECONNECT_MS, 1000 * 2 ** Math.min(Math.max(0, failures), 16));
  return Math.round(base * (0.5 + random()));
}

/**
 * What the page does after a refused `position` or `enter` answer (not one it shows: a
 * challenge, a closed queue, a place held elsewhere): the wait before asking again, ms, or null
 * to stop asking. An overloaded or failing server (429, 5xx) is asked again after its
 * `Retry-After` (seconds) when it gives one, else after `fallbackMs`; any other refusal (a 4xx:
 * not signed in, a bad request) would only be refused again, so the page stops.
 */
export function retryAfterRefusalMs(status: number, retryAfter: string | null, fallbackMs: number): number | null {
  if (status !== 429 && status < 500) return null;
  const seconds = retryAfter === null ? NaN : Number(retryAfter.trim());
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds, 3600) * 1000 : fallbackMs;
}
