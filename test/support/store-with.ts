// A real store with some of its methods replaced: the partial fakes of the tests.

import type { Store } from '../../src/index.js';

/**
 * `store`, with `overrides` in place of its methods of the same names; every other
 * method (optional ones included) is the store's own, bound to it.
 */
export function storeWith<S extends Store>(store: S, overrides: Partial<Record<keyof Store, unknown>>): S {
  return new Proxy(store, {
    get(target, prop) {
      if (Object.hasOwn(overrides, prop)) return overrides[prop as keyof Store];
      const value = Reflect.get(target, prop) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
