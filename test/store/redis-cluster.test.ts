// F20: RedisStore on an ioredis Cluster. A one-node cluster (cluster-enabled, all 16384
// slots on one node) enforces the slot rules that a real cluster does: every script's
// keys must hash to one slot, and a #!lua script may not reach keys of another slot.
// The whole store contract runs here unchanged; then what only a cluster can show:
// one slot per queue, no CROSSSLOT error, and the eviction-policy check through
// Cluster.nodes('master').

import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore, WaitingQueue, type StoreWarning } from '../../src/index.js';
import { queueKeys } from '../../src/store/keys.js';
import { describeAbandonmentContract } from '../contract/abandonment-contract.js';
import { describeControlsContract } from '../contract/controls-contract.js';
import { describeCohortContract } from '../contract/cohort-contract.js';
import { describeFiguresContract } from '../contract/figures-contract.js';
import { describeStoreContract } from '../contract/store-contract.js';
import { parseInfo, startOneNodeCluster, type TestCluster } from '../support/cluster.js';
import { expectOneStepHeard } from '../support/head-moves.js';
import { sleep, uniqueName } from '../support/unique.js';

let cluster: TestCluster;
let client: Cluster;
let node: Redis; // plain admin connection to the single node
const extraClients: Cluster[] = [];

function connectCluster(options: ConstructorParameters<typeof Cluster>[1] = {}): Cluster {
  const c = new Cluster(cluster.startupNodes, { redisOptions: { maxRetriesPerRequest: 1 }, ...options });
  extraClients.push(c);
  return c;
}

beforeAll(async () => {
  cluster = await startOneNodeCluster();
  node = cluster.nodes[0]!.admin;
  client = new Cluster(cluster.startupNodes, { redisOptions: { maxRetriesPerRequest: 1 } });
  await new Promise<void>((resolve, reject) => {
    client.once('ready', resolve);
    client.once('error', reject);
  });
  await node.config('RESETSTAT'); // errorstats from here on are the suite's
});

afterAll(async () => {
  for (const c of extraClients) c.disconnect();
  client?.disconnect();
  await cluster?.stop();
});

describeStoreContract('RedisStore on a Redis Cluster (one node, ioredis Cluster)', {
  concurrent: true,
  async create() {
    return { store: new RedisStore({ client, prefix: uniqueName('wg') }), elapse: sleep };
  },
});

describeControlsContract('RedisStore on a Redis Cluster (one node, ioredis Cluster)', {
  concurrent: true,
  async create() {
    return { store: new RedisStore({ client, prefix: uniqueName('wg') }), elapse: sleep };
  },
});

describeCohortContract('RedisStore on a Redis Cluster (one node, ioredis Cluster)', {
  concurrent: true,
  async create() {
    return { store: new RedisStore({ client, prefix: uniqueName('wg') }), elapse: sleep };
  },
});

describeAbandonmentContract('RedisStore on a Redis Cluster (one node, ioredis Cluster)', {
  concurrent: true,
  async create() {
    return { store: new RedisStore({ client, prefix: uniqueName('wg') }), elapse: sleep };
  },
});

describeFiguresContract('RedisStore on a Redis Cluster (one node, ioredis Cluster)', {
  concurrent: true,
  async create() {
    return { store: new RedisStore({ client, prefix: uniqueName('wg') }), elapse: sleep };
  },
});

// Right after the contract suite: the node's error counters (reset in beforeAll) cover exactly it.
describe('RedisStore on a Redis Cluster: errors seen by the node', () => {
  it('saw no error at all during the contract suite: no CROSSSLOT, no cross-slot key access, no redirection', async () => {
    expect(parseInfo(await node.info('errorstats'))).toEqual({});
    const stats = parseInfo(await node.info('commandstats'));
    const evals = Object.entries(stats).filter(([k]) => /^cmdstat_eval(sha)?$/.test(k));
    expect(evals.length).toBeGreaterThan(0);
    for (const [, line] of evals) {
      expect(line).toMatch(/rejected_calls=0,failed_calls=0/);
      expect(Number(/calls=(\d+)/.exec(line)![1])).toBeGreaterThan(0);
    }
  });
});

/** Every key under a prefix, by SCAN on the node itself (tests only: the library never scans). */
async function keysUnder(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await node.scan(cursor, 'MATCH', `{${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys.sort();
}

/** Every operation of the library, each writing what it can write. */
async function fullLifecycle(queue: WaitingQueue): Promise<void> {
  const members = ['alice', 'bob', 'carol', 'dave', '{braces}', 'a}b{c', 'x:y', 42];
  for (const m of members) await queue.enter(m, { identity: `person-${m}` }); // the identities key
  await expect(queue.enter('alice-again', { identity: 'person-alice' })).rejects.toMatchObject({ code: 'IDENTITY_LIMIT' });
  await queue.position('alice');
  await queue.stats();
  const admissions = await queue.admit();
  expect(admissions.length).toBe(5);
  const [a, b, c] = admissions;
  await queue.consume(await queue.claim(a!.memberId, a!.entryToken));
  await queue.release(await queue.claim(b!.memberId, b!.entryToken));
  await queue.claim(c!.memberId, c!.entryToken); // left claimed: the leases key stays
  await queue.leave('x:y');
  await queue.leave(admissions[3]!.memberId);
  await queue.revoke(a!.memberId); // the revocations key (signed passes)
  await queue.addCodes('vip', ['GOLD-1']); // the codes key
  await queue.enter('invited', { code: 'GOLD-1' }); // the lanes key (still waiting: no step after it)
  await queue.setControls({ message: 'Hello' }, { actor: 'ops' }); // the controls log
  expect(await queue.controlsLog()).toHaveLength(1);
  expect((await queue.stats()).claimed).toBe(1);
}

describe('RedisStore on a Redis Cluster: slots', () => {
  it('keeps every key of a queue in the one slot of its hash tag, for each of several queues', async () => {
    const prefix = uniqueName('wg');
    const store = new RedisStore({ client, prefix });
    const names = ['orders', 'tickets', 'q.2', 'A-b_c'];
    for (const name of names) await fullLifecycle(new WaitingQueue({ store, name, admitBurst: 5, lanes: [{ name: 'vip', share: 0.3 }] }));

    const keys = await keysUnder(prefix);
    for (const name of names) {
      const k = queueKeys(prefix, name);
      const mine = keys.filter((key) => key.startsWith(`{${prefix}:${name}}:`));
      // The fixed key set, every key of it in use after the lifecycle above.
      expect(mine).toEqual(Object.values(k).sort());
      const slots = new Set<number>();
      for (const key of mine) slots.add(Number(await node.call('CLUSTER', 'KEYSLOT', key)));
      expect([...slots]).toEqual([Number(await node.call('CLUSTER', 'KEYSLOT', `{${prefix}:${name}}`))]);
    }
    // Nothing else was written under the prefix (no key per member, none outside the tags).
    expect(keys).toHaveLength(names.length * Object.keys(queueKeys(prefix, 'x')).length);
  });

  it('refuses a #!lua script that reaches across slots (so the suite would have caught one)', async () => {
    const prefix = uniqueName('wg');
    const lua = "#!lua\nreturn redis.call('GET', ARGV[1])";
    await expect(node.eval(lua, 1, `{${prefix}:a}:x`, `{${prefix}:b}:x`)).rejects.toThrow(/same slot|non local key/i);
    await expect(node.eval(lua, 2, `{${prefix}:a}:x`, `{${prefix}:b}:x`, `{${prefix}:a}:y`)).rejects.toThrow(/CROSSSLOT/);
    // The same script within the declared key's slot is fine: the rule is the slot, as the library assumes.
    expect(await node.eval(lua, 1, `{${prefix}:a}:x`, `{${prefix}:a}:y`)).toBeNull();
  });

  it('sends each script to the slot of its hash tag; EVALSHA survives SCRIPT FLUSH on the node', async () => {
    const queue = new WaitingQueue({ store: new RedisStore({ client, prefix: uniqueName('wg') }), name: 'orders', admitBurst: 1 });
    await queue.enter('alice');
    await node.script('FLUSH');
    await queue.enter('bob');
    const [admission] = await queue.admit();
    await node.script('FLUSH');
    const claim = await queue.claim('alice', admission!.entryToken);
    expect(await queue.consume(claim)).toBe(true);
    expect((await queue.position('bob')).rank).toBe(0);
  });

  it('refuses a Cluster client with keyPrefix (it would move keys out of the hash tag)', () => {
    const prefixed = connectCluster({ keyPrefix: 'app:', lazyConnect: true });
    expect(() => new RedisStore({ client: prefixed })).toThrow(/keyPrefix/);
  });
});

describe('RedisStore on a Redis Cluster: eviction-policy check', () => {
  async function withPolicy<T>(policy: string, run: () => Promise<T>): Promise<T> {
    await node.config('SET', 'maxmemory-policy', policy);
    try {
      return await run();
    } finally {
      await node.config('SET', 'maxmemory-policy', 'noeviction');
    }
  }

  it('reads every master through Cluster.nodes("master") and warns about a bad policy', async () => {
    await withPolicy('allkeys-lru', async () => {
      const warnings = await new RedisStore({ client }).warnings();
      expect(warnings).toHaveLength(client.nodes('master').length);
      expect(warnings[0]).toMatchObject({ code: 'EVICTION_POLICY' });
      expect(warnings[0]!.message).toMatch(/allkeys-lru/);
    });
    expect(await new RedisStore({ client }).warnings()).toEqual([]);
  });

  it('emits the warning event once per queue on a Cluster, and none with noeviction', async () => {
    await withPolicy('volatile-lru', async () => {
      const queue = new WaitingQueue({ store: new RedisStore({ client, prefix: uniqueName('wg') }), name: 'orders' });
      const warnings: StoreWarning[] = [];
      queue.on('warning', (w) => warnings.push(w));
      await queue.enter('alice');
      await queue.position('alice');
      await expect.poll(() => warnings.length, { timeout: 2000 }).toBe(1);
      await sleep(100);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.message).toMatch(/volatile-lru/);
    });
    const quiet = new WaitingQueue({ store: new RedisStore({ client, prefix: uniqueName('wg') }), name: 'orders' });
    const none: StoreWarning[] = [];
    quiet.on('warning', (w) => none.push(w));
    await quiet.enter('alice');
    await sleep(100);
    expect(none).toEqual([]);
  });

  it('warns even when the first queue call comes right after `new Cluster(...)`, before it is ready', async () => {
    // The usual start-up code: create the client, the store and the queue, and serve.
    // Until ioredis has loaded the slots, Cluster.nodes('master') is empty.
    await withPolicy('allkeys-lru', async () => {
      const fresh = connectCluster();
      const queue = new WaitingQueue({ store: new RedisStore({ client: fresh, prefix: uniqueName('wg') }), name: 'orders' });
      const warnings: StoreWarning[] = [];
      queue.on('warning', (w) => warnings.push(w));
      await queue.enter('alice');
      await queue.enter('bob');
      await expect.poll(() => warnings.map((w) => w.code), { timeout: 2000 }).toEqual(['EVICTION_POLICY']);
    });
  });
});

describe('the pushes of admission steps on a Cluster', () => {
  it('reach an ioredis Cluster subscriber (on this one-node cluster the push does not have to cross nodes)', async () => {
    const subscriber = connectCluster();
    await expectOneStepHeard(new RedisStore({ client, subscriber, prefix: uniqueName('wg') }), 2);
  });
});
