// Optional store operations (the Store interface marks them optional, for custom stores):
// a queue method that needs one refuses clearly when its store lacks it.

import { WaitgateConfigError } from './errors.js';
import type { Store } from './store/store.js';

/**
 * `store`, typed as having `methods`.
 * @throws {@link WaitgateConfigError} naming the store when one is missing (`does`: what they do).
 */
export function storeThat<M extends keyof Store>(store: Store, methods: readonly M[], does: string): Store & Required<Pick<Store, M>> {
  if (methods.some((m) => typeof store[m] !== 'function')) {
    throw new WaitgateConfigError('store', `does not ${does} (${methods.join('/')}); RedisStore and MemoryStore do`);
  }
  return store as Store & Required<Pick<Store, M>>;
}

/**
 * How long a store keeps a revocation (WaitingQueue.revoke): a day, the longest
 * `sessionSeconds` a pass guard takes, so no pass it refuses is admitted again by forgetting.
 */
export const REVOCATION_RETAIN_MS = 86_400_000;
