// RedisStore on a node-redis cluster (`createCluster`) over a one-node Redis Cluster: the
// whole contract, each script sent to the slot of its queue's hash tag (no CROSSSLOT, no
// redirection), SCRIPT FLUSH survived, every master's eviction policy read.

import { createCluster, type RedisClusterType } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore, WaitingQueue } from '../../src/index.js';
import { describeAbandonmentContract } from '../contract/abandonment-contract.js';
import { describeControlsContract } from '../contract/controls-contract.js';
import { describeFiguresContract } from '../contract/figures-contract.js';
import { describeStoreContract } from '../contract/store-contract.js';
import { parseInfo, startOneNodeCluster, type TestCluster } from '../support/cluster.js';
import { sleep, uniqueName } from '../support/unique.js';

let cluster: TestCluster;
let client: RedisClusterType;

beforeAll(async () => {
  cluster = await startOneNodeCluster();
  client = createCluster({ rootNodes: cluster.startupNodes.map(({ host, port }) => ({ url: `redis://${host}:${port}` })) }) as RedisClusterType;
  client.on('error', () => undefined);
  await client.connect();
  await cluster.nodes[0]!.admin.config('RESETSTAT'); // errorstats from here on are the suite's
});

afterAll(async () => {
  client?.destroy();
  await cluster?.stop();
});

const harness = {
  concurrent: true,
  async create() {
    return { store: new RedisStore({ client, prefix: uniqueName('nr') }), elapse: sleep };
  },
};
describeStoreContract('RedisStore on a Redis Cluster (one node, node-redis createCluster)', harness);
describeControlsContract('RedisStore on a Redis Cluster (one node, node-redis createCluster)', harness);
describeAbandonmentContract('RedisStore on a Redis Cluster (one node, node-redis createCluster)', harness);
describeFiguresContract('RedisStore on a Redis Cluster (one node, node-redis createCluster)', harness);

describe('RedisStore on a node-redis cluster', () => {
  it('saw no error at all during the contract suite: no CROSSSLOT, no cross-slot key access, no redirection', async () => {
    const node = cluster.nodes[0]!.admin;
    expect(parseInfo(await node.info('errorstats'))).toEqual({});
    const evals = Object.entries(parseInfo(await node.info('commandstats'))).filter(([k]) => /^cmdstat_eval(sha)?(_ro)?$/.test(k));
    expect(evals.length).toBeGreaterThan(0);
    for (const [, line] of evals) expect(line).toMatch(/rejected_calls=0,failed_calls=0/);
  });

  it('survives SCRIPT FLUSH on the node (EVAL after NOSCRIPT)', async () => {
    const node = cluster.nodes[0]!.admin;
    const queue = new WaitingQueue({ store: new RedisStore({ client, prefix: uniqueName('nr') }), name: 'orders', admitBurst: 1 });
    await queue.enter('alice');
    await node.script('FLUSH');
    await queue.enter('bob');
    const [admission] = await queue.admit();
    await node.script('FLUSH');
    const claim = await queue.claim('alice', admission!.entryToken);
    expect(await queue.consume(claim)).toBe(true);
    expect((await queue.position('bob')).rank).toBe(0);
  });

  it('reads every master for the eviction-policy check', async () => {
    const node = cluster.nodes[0]!.admin;
    await node.config('SET', 'maxmemory-policy', 'allkeys-lru');
    try {
      const warnings = await new RedisStore({ client }).warnings();
      expect(warnings).toHaveLength(client.masters.length);
      expect(warnings[0]).toMatchObject({ code: 'EVICTION_POLICY' });
    } finally {
      await node.config('SET', 'maxmemory-policy', 'noeviction');
    }
    expect(await new RedisStore({ client }).warnings()).toEqual([]);
  });
});
