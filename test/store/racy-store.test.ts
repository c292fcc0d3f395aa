// The store contract against RacyStore, a store whose enter, admit and claim are check-then-act
// with a yield in between (test/support/racy-store.ts): everything done one call at a time
// passes, and each concurrency test must fail. This is what shows that the concurrency tests,
// which pass on MemoryStore (where no two operations can interleave), can catch a race.

import { RacyStore } from '../support/racy-store.js';
import { describeStoreContract } from '../contract/store-contract.js';

describeStoreContract('RacyStore (deliberately non-atomic)', {
  nonAtomic: true,
  async create() {
    let offset = 0;
    return { store: new RacyStore({ now: () => Date.now() + offset }), elapse: async (ms: number) => void (offset += ms) };
  },
});
