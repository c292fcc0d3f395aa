// Pushes of admission steps (Store.watchHeadMoves): after each step that takes members
// off a line, every store tells its listeners the queue's count of members taken off it,
// the same count its snapshot reads; with them, positionCache lowers every estimate by
// each step at once instead of waiting for its next snapshot. RedisStore hears them on
// the `subscriber` connection (ioredis and node-redis); MemoryStore in process.

import { Redis } from 'ioredis';
import { createClient, type RedisClientType } from 'redis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MemoryStore, QueueStateLostError, RedisStore, WaitgateConfigError, WaitingQueue, type Store } from '../../src/index.js';
import { queueKeys } from '../../src/store/keys.js';
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

/** A store, and for a RedisStore a way to cut its subscriber's connection: resolves once the client is connected again. */
interface Subject {
  store: Store;
  cutSubscriber?: () => Promise<void>;
}

/** Cuts the connection named `name` of `subscriber`, and waits for the subscriber's next `ready` (connected again). */
async function cut(subscriber: { once(event: 'ready', listener: () => void): unknown }, name: string): Promise<void> {
  const ready = new Promise<void>((resolve) => subscriber.once('ready', () => resolve()));
  await killConnection(name);
  await ready;
}

/** Cuts the connection named `name` (its client connects again by itself). */
async function killConnection(name: string): Promise<void> {
  const admin = ioredis();
  const list = String(await admin.call('CLIENT', 'LIST'));
  const line = list.split('\n').find((l) => l.includes(` name=${name} `));
  expect(line, `no connection named ${name}`).toBeDefined();
  const id = /(?:^|\s)id=(\d+)/.exec(line!)![1]!;
  expect(await admin.call('CLIENT', 'KILL', 'ID', id)).toBe(1);
}

const subjects: Array<[string, () => Promise<Subject>]> = [
  ['MemoryStore', async () => ({ store: new MemoryStore() })],
  [
    'RedisStore on ioredis with a subscriber',
    async () => {
      const client = ioredis();
      const subscriberName = uniqueName('sub');
      const subscriber = client.duplicate({ connectionName: subscriberName });
      closing.push(() => subscriber.disconnect());
      return { store: new RedisStore({ client, subscriber, prefix: uniqueName('hm') }), cutSubscriber: () => cut(subscriber, subscriberName) };
    },
  ],
  [
    'RedisStore on node-redis with a subscriber',
    async () => {
      const client = await nodeRedis();
      const subscriberName = uniqueName('sub');
      const subscriber = client.duplicate({ name: subscriberName });
      subscriber.on('error', () => undefined);
      await subscriber.connect();
      closing.push(() => subscriber.destroy());
      return { store: new RedisStore({ client, subscriber, prefix: uniqueName('hm') }), cutSubscriber: () => cut(subscriber, subscriberName) };
    },
  ],
];

describe.each(subjects)('head moves on %s', (_label, createSubject) => {
  let subject: Subject;
  let store: Store;
  beforeAll(async () => {
    subject = await createSubject();
    store = subject.store;
  });

  /** A watch of `name` that records what it hears and its errors, live before it is returned. */
  async function liveWatch(name: string) {
    const heard: number[] = [];
    const errors: Error[] = [];
    const watch = store.watchHeadMoves!(
      name,
      (n) => heard.push(n),
      (error) => errors.push(error),
    );
    expect(await until(async () => watch.live(), true)).toBe(true);
    return { watch, heard, errors };
  }

  it('pushes the count of members taken off the line after each step that took any, the count its snapshot reads', async () => {
    const name = uniqueName('q');
    const queue = new WaitingQueue({ store, name, admitRatePerSecond: 5, abandonAfterSeconds: null });
    const { watch, heard, errors } = await liveWatch(name);
    for (let i = 0; i < 12; i++) await queue.enter(`m${i}`);
    expect((await store.queueSnapshot!(name)).headMoves).toBe(0);
    expect(await queue.admit()).toHaveLength(5);
    expect(await until(async () => heard.at(-1), 5)).toBe(5);
    expect(await queue.admit()).toHaveLength(0); // the bucket is empty: no step, no push
    await sleep(50);
    expect(heard).toEqual([5]);
    expect((await store.queueSnapshot!(name)).headMoves).toBe(5);
    // Stopped: not called again.
    watch.stop();
    await sleep(1100); // the bucket refills
    expect((await queue.admit()).length).toBeGreaterThan(0);
    await sleep(50);
    expect(heard).toEqual([5]);
    expect(errors).toEqual([]);
  });

  it('lowers a cached estimate by each admission step before the snapshot is refreshed, to the exact rank', async () => {
    const name = uniqueName('q');
    // A snapshot that is never refreshed during the test: every change of rank comes from the pushes.
    // A burst of 40, then a token a second: the second admit() finds the bucket still empty
    // (at 40/s it refilled in 25 ms, and a slow or loaded machine admitted one more).
    const options = {
      store,
      name,
      admitRatePerSecond: 1,
      admitBurst: 40,
      abandonAfterSeconds: null,
      positionCache: { refreshMs: 60_000, exactBelowRank: 10 },
    };
    const cached = new WaitingQueue(options);
    const other = new WaitingQueue({ ...options, positionCache: undefined }); // another instance admits
    for (let i = 0; i < 200; i++) await other.enter(`m${i}`);
    expect((await cached.position('m150')).rank).toBe(150); // exact: the cache learns its place
    expect((await cached.position('m150')).rank).toBe(150); // estimated from the snapshot taken now; listening from then on
    (await liveWatch(name)).watch.stop(); // the subscription of the channel is answered
    expect(await other.admit()).toHaveLength(40);
    expect(await until(async () => (await cached.position('m150')).rank, 110)).toBe(110);
    expect((await other.position('m150')).rank).toBe(110);
    expect(await other.admit()).toHaveLength(0);
    await other.leave('m0'); // not an admission step: the cache does not hear of it
    expect((await cached.position('m150')).rank).toBe(110);
  });

  it('is live again after its connection was cut, and hears the steps after it', async () => {
    if (!subject.cutSubscriber) return; // MemoryStore: no connection to cut
    const name = uniqueName('q');
    const queue = new WaitingQueue({ store, name, admitRatePerSecond: 2, abandonAfterSeconds: null });
    const { watch, heard, errors } = await liveWatch(name);
    await subject.cutSubscriber();
    // Connected again: live once SUBSCRIBE is answered on the new connection (not before: pushes would be missed).
    expect(await until(async () => watch.live(), true)).toBe(true);
    for (const id of ['a', 'b', 'c']) await queue.enter(id);
    expect(await queue.admit()).toHaveLength(2);
    expect(await until(async () => heard.at(-1), 2)).toBe(2);
    expect(errors).toEqual([]);
  });
});

describe('RedisStore without a subscriber', () => {
  it('is never live: the cache estimates from the pace of the head until its next snapshot', async () => {
    const store = new RedisStore({ client: ioredis(), prefix: uniqueName('hm') });
    const name = uniqueName('q');
    // A burst of 40, then a token a second: the second admit() finds the bucket still empty
    // (at 40/s it refilled in 25 ms, and a slow or loaded machine admitted one more).
    const options = {
      store,
      name,
      admitRatePerSecond: 1,
      admitBurst: 40,
      abandonAfterSeconds: null,
      positionCache: { refreshMs: 60_000, exactBelowRank: 10 },
    };
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

describe('two queue objects of one name on one RedisStore with a subscriber, when the state is lost', () => {
  it('do not carry the old state’s count into the new one: the one that did not reinitialize still estimates right', async () => {
    const client = ioredis();
    const subscriber = client.duplicate();
    closing.push(() => subscriber.disconnect());
    const prefix = uniqueName('hm');
    const store = new RedisStore({ client, subscriber, prefix });
    const name = uniqueName('q');
    const options = { store, name, admitRatePerSecond: 1000, abandonAfterSeconds: null };
    const a = new WaitingQueue(options);
    const b = new WaitingQueue({ ...options, positionCache: { refreshMs: 20, exactBelowRank: 0 } });
    for (let i = 0; i < 1500; i++) await a.enter(`old${i}`);
    await b.position('old1400');
    await b.position('old1400'); // b listens from here on
    const watch = store.watchHeadMoves(
      name,
      () => undefined,
      () => undefined,
    );
    expect(await until(async () => watch.live(), true)).toBe(true);
    watch.stop();
    expect(await a.admit()).toHaveLength(1000); // the old state's count: 1,000
    expect(await until(async () => (await b.position('old1400')).rank, 400)).toBe(400);
    // The state is lost (its keys deleted); a reinitializes and a new line forms; b is not told.
    await client.del(...Object.values(queueKeys(prefix, name)));
    await expect(a.enter('x')).rejects.toThrow(QueueStateLostError);
    await a.reinitialize();
    for (let i = 0; i < 600; i++) await a.enter(`new${i}`);
    expect((await b.position('new500')).rank).toBe(500); // exact: learned
    await sleep(50); // b's snapshot is older than refreshMs: the next estimate takes a new one
    expect((await b.position('new500')).rank).toBe(500);
    expect((await b.position('new500')).rank).toBe(500);
  });
});
