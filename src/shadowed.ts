// The count of shadowed members (SPEC §17) an instance answered: kept on the queue object under
// a registry symbol, so that the queue routes (another copy of the package, ESM beside CJS, alike)
// and stats() meet without a store write: a shadowed member costs the store nothing.

import type { QueueStats } from './types.js';

const SHADOWED: unique symbol = Symbol.for('waitgate.shadowed') as never;

type Counted = { [SHADOWED]?: number };

/** Counts one more member shadowed on this instance. */
export function countShadowed(queue: object): void {
  const q = queue as Counted;
  q[SHADOWED] = (q[SHADOWED] ?? 0) + 1;
}

/** Stats with `totals.shadowed`: this instance's count (it is never written to the store). */
export function withShadowed(stats: QueueStats, queue: object): QueueStats {
  return { ...stats, totals: { ...stats.totals, shadowed: (queue as Counted)[SHADOWED] ?? 0 } };
}
