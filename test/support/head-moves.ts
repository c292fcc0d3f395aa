// One admission step of `steps` members, heard through a store's watchHeadMoves: what the
// ACL, Cluster and client tests each check of a subscriber set up their own way.

import { expect } from 'vitest';
import { WaitingQueue, type Store } from '../../src/index.js';
import { sleep, uniqueName } from './unique.js';

/**
 * Watches a new queue of `store`, waits (up to `waitMs`) until the watch is live, enters
 * `steps + 1` members and admits `steps`: the watch must hear exactly one push, `steps`,
 * and no error.
 */
export async function expectOneStepHeard(store: Store, steps: number, waitMs = 2000): Promise<void> {
  const name = uniqueName('q');
  const heard: number[] = [];
  const errors: Error[] = [];
  const watch = store.watchHeadMoves!(
    name,
    (n) => heard.push(n),
    (e) => errors.push(e),
  );
  const queue = new WaitingQueue({ store, name, admitRatePerSecond: steps, abandonAfterSeconds: null });
  for (let i = 0; i <= steps; i++) await queue.enter(`m${i}`);
  for (let waited = 0; waited < waitMs && !watch.live(); waited += 10) await sleep(10);
  expect(watch.live()).toBe(true);
  expect(await queue.admit()).toHaveLength(steps);
  for (let waited = 0; waited < waitMs && heard.length === 0; waited += 10) await sleep(10);
  expect(errors).toEqual([]);
  expect(heard).toEqual([steps]);
}
