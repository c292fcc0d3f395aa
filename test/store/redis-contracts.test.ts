// The rules' contracts on a real redis-server (controls, cohort, stock, lanes, always-on,
// abandonment, figures, truth, adaptive admission), beside test/store/redis-store.test.ts (the
// store contract and what only Redis shows): two files, so they run side by side. Their tests
// run side by side too (StoreHarness.concurrent): each sleeps through real TTLs on its own queue.

import { Redis } from 'ioredis';
import { afterAll, beforeAll, inject } from 'vitest';
import { RedisStore } from '../../src/index.js';
import { describeAbandonmentContract } from '../contract/abandonment-contract.js';
import { describeAdaptiveContract } from '../contract/adaptive-contract.js';
import { describeAlwaysOnContract } from '../contract/always-on-contract.js';
import { describeCohortContract } from '../contract/cohort-contract.js';
import { describeControlsContract } from '../contract/controls-contract.js';
import { describeFiguresContract } from '../contract/figures-contract.js';
import { describeLanesContract } from '../contract/lanes-contract.js';
import { describeStockContract } from '../contract/stock-contract.js';
import { describeTruthContract } from '../contract/truth-contract.js';
import type { StoreHarness } from '../contract/store-contract.js';
import { sleep, uniqueName } from '../support/unique.js';

let shared: Redis;
beforeAll(() => {
  shared = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
});
afterAll(() => shared.disconnect());

/** A RedisStore on the shared server under a prefix of its own per test. */
const harness = (options: { groupCommit?: boolean } = {}): StoreHarness => ({
  concurrent: true,
  async create() {
    return { store: new RedisStore({ client: shared, prefix: uniqueName('wg'), ...options }), elapse: sleep };
  },
});

describeControlsContract('RedisStore, group commit off', harness({ groupCommit: false }));
describeCohortContract('RedisStore', harness());
describeControlsContract('RedisStore', harness());
describeStockContract('RedisStore', harness());
describeLanesContract('RedisStore', harness());
describeAlwaysOnContract('RedisStore', harness());
describeAbandonmentContract('RedisStore', harness());
describeFiguresContract('RedisStore', harness());
describeTruthContract('RedisStore', harness());
describeAdaptiveContract('RedisStore', harness());
