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
