// Pushes of admission steps (Store.watchHeadMoves): after each step that takes members
// off a line, every store tells its listeners the queue's count of members taken off it,
// the same count its snapshot reads; with them, positionCache lowers every estimate by
// each step at once instead of waiting for its next snapshot. RedisStore hears them on
// the `subscriber` connection (ioredis and node-redis); MemoryStore in process.

import { Redis } from 'ioredis';
import { createClient, type RedisClientType } from 'redis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MemoryStore, RedisStore, WaitgateConfigError, WaitingQueue, type Store } from '../../src/index.js';
import { sleep, uniqueName } from '../support/unique.js';

/** Waits until `read()` gives `expected` (or 5 s pass), and returns its last value. */
async function until<T>(read: () => Promise<T>, expected: T): Promise<T> {
  const deadline = performance.now() + 5000;
  let value = await read();
  while (value !== expected && performance.now() < deadline) {
    await sleep(10);
    value = await read();
  }
  return value;
}

const closing: Array<() => Promise<unknown> | void> = [];
afterAll(async () => {
  for (const close of closing) await close();
});

async function nodeRedis(): Promise<RedisClientType> {
  const client = createClient({ url: inject('redisUrl') }) as RedisClientType;
  client.on('error', () => undefined);
  await client.connect();
  closing.push(() => client.destroy());
  return client;
}

function ioredis(): Redis {
  const client = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
  closing.push(() => client.disconnect());
  return client;
}

const stores: Array<[string, () => Promise<Store>]> = [
  ['MemoryStore', async () => new MemoryStore()],
  [
    'RedisStore on ioredis with a subscriber',
    async () => {
      const client = ioredis();
      return new RedisStore({ client, subscriber: client.duplicate(), prefix: uniqueName('hm') });
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
      return new RedisStore({ client, subscriber, prefix: uniqueName('hm') });
    },
  ],
];

describe.each(stores)('head moves on %s', (_label, createStore) => {
  let store: Store;
  beforeAll(async () => {
    store = await createStore();
  });

  it('pushes the count of members taken off the line after each step that took any, the count its snapshot reads', async () => {
    const name = uniqueName('q');
    const queue = new WaitingQueue({ store, name, admitRatePerSecond: 5, abandonAfterSeconds: null });
    const heard: number[] = [];
    const watch = store.watchHeadMoves!(
      name,
      (n) => heard.push(n),
      (error) => heard.push(-1, Number(error.message)),
    );
    await until(async () => watch.live(), true);
    expect(watch.live()).toBe(true);
    for (let i = 0; i < 12; i++) await queue.enter(`m${i}`);
    expect((await store.queueSnapshot!(name)).headMoves).toBe(0);
    expect(await queue.admit()).toHaveLength(5);
    expect(await until(async () => heard.at(-1), 5)).toBe(5);
    expect(await queue.admit()).toHaveLength(0); // the bucket is empty: no step, no push
    await sleep(50);
    expect(heard).toEqual([5]);
    expect((await store.queueSnapshot!(name)).headMoves).toBe(5);
  });

  it('lowers a cached estimate by each admission step before the snapshot is refreshed, to the exact rank', async () => {
    const name = uniqueName('q');
    // A snapshot that is never refreshed during the test: every change of rank comes from the pushes.
    const options = { store, name, admitRatePerSecond: 40, abandonAfterSeconds: null, positionCache: { refreshMs: 60_000, exactBelowRank: 10 } };
    const cached = new WaitingQueue(options);
    const other = new WaitingQueue({ ...options, positionCache: undefined }); // another instance admits
    for (let i = 0; i < 200; i++) await other.enter(`m${i}`);
    expect((await cached.position('m150')).rank).toBe(150); // exact: the cache learns its place
    expect((await cached.position('m150')).rank).toBe(150); // estimated from the snapshot taken now
    expect(await other.admit()).toHaveLength(40);
    expect(await until(async () => (await cached.position('m150')).rank, 110)).toBe(110);
    expect((await other.position('m150')).rank).toBe(110);
    expect(await other.admit()).toHaveLength(0);
    await other.leave('m0'); // not an admission step: the cache does not hear of it
    expect((await cached.position('m150')).rank).toBe(110);
  });
});

describe('RedisStore without a subscriber', () => {
  it('is never live: the cache estimates from the pace of the head until its next snapshot', async () => {
    const store = new RedisStore({ client: ioredis(), prefix: uniqueName('hm') });
    const name = uniqueName('q');
    const options = { store, name, admitRatePerSecond: 40, abandonAfterSeconds: null, positionCache: { refreshMs: 60_000, exactBelowRank: 10 } };
    const cached = new WaitingQueue(options);
    const other = new WaitingQueue({ ...options, positionCache: undefined });
    for (let i = 0; i < 200; i++) await other.enter(`m${i}`);
    expect(
      store
        .watchHeadMoves(
          name,
          () => undefined,
          () => undefined,
        )
        .live(),
    ).toBe(false);
    await cached.position('m150');
    await cached.position('m150');
    await other.admit();
    await sleep(100);
    // One snapshot measures no pace yet: the estimate stays where the snapshot put it.
    expect((await cached.position('m150')).rank).toBe(150);
  });

  it('refuses a subscriber that is the client itself, or not a client', () => {
    const client = ioredis();
    expect(() => new RedisStore({ client, subscriber: client as never })).toThrow(WaitgateConfigError);
    expect(() => new RedisStore({ client, subscriber: client as never })).toThrow(/subscriber.*duplicate\(\)/);
    expect(() => new RedisStore({ client, subscriber: {} as never })).toThrow(WaitgateConfigError);
  });
});
