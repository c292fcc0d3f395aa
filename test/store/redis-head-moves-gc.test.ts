// SPEC §14: dropped WaitingQueue objects are garbage-collected whether or not the store
// has a subscriber, and one subscriber shared by many stores adds a bounded number of
// listeners. A queue with positionCache listens to its head moves (Store.watchHeadMoves)
// from its first estimate: nothing the store or the subscriber keeps for that may hold
// the queue, its cache or its listener once the queue is dropped.

import { Redis } from 'ioredis';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createClient, type RedisClientType } from 'redis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { MemoryStore, RedisStore, WaitingQueue, type Store } from '../../src/index.js';
import { PRESENCE_FLUSH_MS } from '../../src/presence.js';
import { storeWith } from '../support/store-with.js';
import { sleep, uniqueName } from '../support/unique.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const closing: Array<() => unknown> = [];
afterAll(async () => {
  for (const close of closing) await close();
});

function ioredis(): Redis {
  const client = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
  closing.push(() => client.disconnect());
  return client;
}

async function nodeRedis(): Promise<RedisClientType> {
  const client = createClient({ url: inject('redisUrl') }) as RedisClientType;
  client.on('error', () => undefined);
  await client.connect();
  closing.push(() => client.destroy());
  return client;
}

const QUEUES = 5000;

/**
 * Builds QUEUES queue objects of one line on `store`, each with a position cache that
 * listens to the head moves (an exact answer, then an estimate), drops them, and runs
 * the collector: how many of the queues, and of the listeners they gave the store, were
 * collected.
 */
async function dropQueues(store: Store, name: string): Promise<{ queues: number; listeners: number; watched: number }> {
  let queues = 0;
  let listeners = 0;
  let watched = 0;
  const queueRegistry = new FinalizationRegistry<null>(() => void queues++);
  const listenerRegistry = new FinalizationRegistry<null>(() => void listeners++);
  const watch = store.watchHeadMoves!.bind(store);
  store.watchHeadMoves = (queue, listener, onError) => {
    watched++;
    listenerRegistry.register(listener, null);
    return watch(queue, listener, onError);
  };
  const options = { store, name, admitRatePerSecond: 10, abandonAfterSeconds: null, positionCache: { exactBelowRank: 0 } };
  const BATCH = 100;
  for (let i = 0; i < QUEUES; i += BATCH) {
    await Promise.all(
      Array.from({ length: BATCH }, async () => {
        const queue = new WaitingQueue(options);
        queueRegistry.register(queue, null);
        await queue.position('m5'); // exact: the cache learns its place
        await queue.position('m5'); // estimated: the cache takes a snapshot and listens
      }),
    );
  }
  await sleep(PRESENCE_FLUSH_MS + 100);
  for (let round = 0; round < 30 && (queues < QUEUES || listeners < QUEUES); round++) {
    gc();
    await sleep(20);
  }
  store.watchHeadMoves = watch;
  return { queues, listeners, watched };
}

/** Admits one step on `name` and checks that a queue kept alive still hears it: its estimate falls before its next snapshot. */
async function liveCacheHearsSteps(store: Store, name: string, kept: WaitingQueue): Promise<void> {
  const admitter = new WaitingQueue({ store, name, admitRatePerSecond: 10, abandonAfterSeconds: null });
  expect((await kept.position('m15')).rank).toBe(15);
  expect(await admitter.admit()).toHaveLength(10);
  const deadline = performance.now() + 5000;
  let rank = (await kept.position('m15')).rank;
  while (rank !== 5 && performance.now() < deadline) {
    await sleep(10);
    rank = (await kept.position('m15')).rank;
  }
  expect(rank).toBe(5);
}

const stores: Array<[string, () => Promise<Store>]> = [
  ['MemoryStore', async () => new MemoryStore()],
  [
    'RedisStore on ioredis with a subscriber',
    async () => {
      const client = ioredis();
      const subscriber = client.duplicate();
      closing.push(() => subscriber.disconnect());
      return new RedisStore({ client, subscriber, prefix: uniqueName('gc') });
    },
  ],
  [
    'RedisStore on node-redis with a subscriber',
    async () => {
      const client = await nodeRedis();
      const subscriber = client.duplicate();
      subscriber.on('error', () => undefined);
      await subscriber.connect();
      closing.push(() => subscriber.destroy());
      return new RedisStore({ client, subscriber, prefix: uniqueName('gc') });
    },
  ],
  ['RedisStore without a subscriber', async () => new RedisStore({ client: ioredis(), prefix: uniqueName('gc') })],
];

describe.each(stores)('dropped queues with a position cache on %s', (label, createStore) => {
  it(`are collected, with what they gave the store, and the ones kept still hear the steps`, { timeout: 120_000 }, async () => {
    const store = await createStore();
    const name = uniqueName('q');
    const writer = new WaitingQueue({ store, name, admitRatePerSecond: 10, abandonAfterSeconds: null });
    for (let i = 0; i < 20; i++) await writer.enter(`m${i}`);
    const kept = new WaitingQueue({ store, name, admitRatePerSecond: 10, abandonAfterSeconds: null, positionCache: { refreshMs: 60_000, exactBelowRank: 0 } });
    await kept.position('m15');
    const { queues, listeners, watched } = await dropQueues(store, name);
    console.log(`${label}: ${queues} of ${QUEUES} queues and ${listeners} of ${watched} listeners collected`);
    expect(queues).toBeGreaterThanOrEqual(QUEUES * 0.9);
    if (label !== 'RedisStore without a subscriber') {
      // (Without one the store keeps no listener: nothing to collect but the queues.)
      expect(watched).toBe(QUEUES);
      expect(listeners).toBeGreaterThanOrEqual(QUEUES * 0.9);
    }
    // Without a subscriber nothing is heard: the estimate waits for the next snapshot.
    if (label !== 'RedisStore without a subscriber') await liveCacheHearsSteps(store, name, kept);
  });
});

describe('a queue the store holds weakly', () => {
  it('still hears, while it lives, the failures its watch reports (as an error event)', async () => {
    const memory = new MemoryStore();
    let report: ((error: Error) => void) | undefined;
    const store = storeWith(memory, {
      watchHeadMoves: (queue: string, listener: (n: number) => void, onError: (error: Error) => void) => {
        report = onError;
        return memory.watchHeadMoves(queue, listener);
      },
    });
    const name = uniqueName('q');
    const queue = new WaitingQueue({ store, name, admitRatePerSecond: 10, abandonAfterSeconds: null, positionCache: { exactBelowRank: 0 } });
    const errors: Error[] = [];
    queue.on('error', (error) => errors.push(error));
    await queue.enter('a');
    await queue.position('a'); // estimated: the cache listens
    gc();
    report!(new Error('cannot subscribe'));
    expect(errors.map((e) => e.message)).toEqual(['cannot subscribe']);
  });
});

describe('one subscriber shared by many RedisStores', () => {
  const STORES = 12;
  const subscribers: Array<[string, () => Promise<{ client: Redis | RedisClientType; subscriber: Redis | RedisClientType }>]> = [
    [
      'ioredis',
      async () => {
        const client = ioredis();
        const subscriber = client.duplicate();
        closing.push(() => subscriber.disconnect());
        return { client, subscriber };
      },
    ],
    [
      'node-redis',
      async () => {
        const client = await nodeRedis();
        const subscriber = client.duplicate();
        subscriber.on('error', () => undefined);
        await subscriber.connect();
        closing.push(() => subscriber.destroy());
        return { client, subscriber };
      },
    ],
  ];

  it.each(subscribers)('on %s adds one set of listeners, not one per store, and every store hears its steps', async (_label, create) => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => void warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const { client, subscriber } = await create();
      const events = ['message', 'ready', 'close', 'end', 'reconnecting'] as const;
      const before = Object.fromEntries(events.map((e) => [e, subscriber.listenerCount(e)]));
      const prefix = uniqueName('gc');
      // Two stores of one prefix: both hear the same channel.
      const all = Array.from(
        { length: STORES },
        (_, i) => new RedisStore({ client: client as never, subscriber: subscriber as never, prefix: i < 2 ? prefix : uniqueName('gc') }),
      );
      const name = uniqueName('q');
      const heard = all.map(() => [] as number[]);
      const watches = all.map((store, i) =>
        store.watchHeadMoves(
          name,
          (n) => heard[i]!.push(n),
          (error) => warnings.push(error),
        ),
      );
      const deadline = performance.now() + 5000;
      while (!watches.every((w) => w.live()) && performance.now() < deadline) await sleep(10);
      expect(watches.map((w) => w.live())).toEqual(all.map(() => true));
      for (const e of events) expect(subscriber.listenerCount(e) - before[e]!, e).toBeLessThanOrEqual(1);
      for (const [i, store] of all.entries()) {
        if (i === 1) continue; // the same line as store 0
        const queue = new WaitingQueue({ store, name, admitRatePerSecond: 3, abandonAfterSeconds: null });
        for (const id of ['a', 'b', 'c', 'd']) await queue.enter(id);
        if (i === 0) await all[1]!.queueSnapshot(name); // store 1 learns the line's generation: it hears its pushes
        expect(await queue.admit()).toHaveLength(3);
      }
      while (!heard.every((h) => h.at(-1) === 3) && performance.now() < deadline + 5000) await sleep(10);
      expect(heard).toEqual(all.map(() => [3]));
      for (const w of watches) w.stop();
      await sleep(10); // a warning is emitted on the next tick
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
