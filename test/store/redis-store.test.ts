// RedisStore: the store contract on a real redis-server (the rules' contracts: redis-contracts.test.ts), plus what only Redis can show:
// the fixed key set, NOSCRIPT recovery, bounded failure when Redis is gone or paused,
// read-only polling under CLIENT PAUSE WRITE, and the eviction-policy warning.

import { Redis, type RedisOptions } from 'ioredis';
import { scripts } from '../../src/store/lua.generated.js';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { toHttpResponse } from '../../src/index.js';
import {
  InvalidMemberIdError,
  QueueStateLostError,
  RedisStore,
  StoreUnavailableError,
  WaitgateConfigError,
  WaitingQueue,
  type StoreWarning,
} from '../../src/index.js';
import { describeRevokeContract } from '../contract/revoke-contract.js';
import { describeIdentityContract } from '../contract/identity-contract.js';
import { describeStoreContract } from '../contract/store-contract.js';
import { signingWith } from '../support/signing-keys.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { sleep, uniqueName } from '../support/unique.js';

let shared: Redis;
beforeAll(() => {
  shared = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
});
afterAll(() => shared.disconnect());

describeStoreContract('RedisStore', {
  concurrent: true,
  async create() {
    return { store: new RedisStore({ client: shared, prefix: uniqueName('wg') }), elapse: sleep };
  },
});

// The same contract with signed passes for tokens (SPEC §15): claim, consume, release and expiry
// by the pass's jti behave as with opaque tokens.
describeStoreContract('RedisStore, signed passes', {
  concurrent: true,
  async create() {
    return { store: new RedisStore({ client: shared, prefix: uniqueName('wg') }), elapse: sleep };
  },
  queueOptions: { signing: signingWith() },
});

// Group commit is on by default (every contract above and below); the contracts of the
// calls it batches (enter, position, claim) also run with it off.
describeStoreContract('RedisStore, group commit off', {
  concurrent: true,
  async create() {
    return { store: new RedisStore({ client: shared, prefix: uniqueName('wg'), groupCommit: false }), elapse: sleep };
  },
});

/** Every key under a prefix, by SCAN (tests only: the library never scans). */
async function keysUnder(client: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', `{${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys.sort();
}

describe('RedisStore keys', () => {
  it('keeps one small fixed set of keys under one hash tag, however many members enter', async () => {
    const prefix = uniqueName('wg');
    const queue = new WaitingQueue({ store: new RedisStore({ client: shared, prefix }), name: 'orders', admitRatePerSecond: 100 });
    for (let i = 0; i < 10_000; i += 500) {
      await Promise.all(Array.from({ length: 500 }, (_, j) => queue.enter(`member-${i + j}`)));
    }
    const admissions = await queue.admit();
    await queue.consume(await queue.claim(admissions[0]!.memberId, admissions[0]!.entryToken));
    const claim = await queue.claim(admissions[1]!.memberId, admissions[1]!.entryToken);
    await queue.release(claim);
    await queue.leave('member-9999');

    const keys = await keysUnder(shared, prefix);
    expect(keys).toEqual(['active', 'admits', 'consumed', 'entries', 'meta', 'seen', 'tokens', 'waiting'].map((k) => `{${prefix}:orders}:${k}`));
    expect(await shared.zcard(`{${prefix}:orders}:waiting`)).toBe(10_000 - 100 - 1);
    // Entry checkpoints: at most one a second of entries, and none behind the head's own.
    expect(await shared.zcard(`{${prefix}:orders}:entries`)).toBeLessThanOrEqual(30);
  });

  it('writes no key for a bad member id or a malformed token', async () => {
    const prefix = uniqueName('wg');
    const queue = new WaitingQueue({ store: new RedisStore({ client: shared, prefix }), name: 'orders' });
    for (const bad of ['', 'x'.repeat(129), 'a\r\nb', -1, 1.5, {}]) {
      await expect(queue.enter(bad as string)).rejects.toBeInstanceOf(InvalidMemberIdError);
    }
    await expect(queue.claim('alice', 'short')).rejects.toMatchObject({ code: 'INVALID' });
    expect(await keysUnder(shared, prefix)).toEqual([]);
  });

  it('stamps expiries with Redis TIME', async () => {
    const queue = new WaitingQueue({ store: new RedisStore({ client: shared, prefix: uniqueName('wg') }), entryTokenTtlSeconds: 60 });
    await queue.enter('alice');
    const [admission] = await queue.admit();
    const [seconds, micros] = await shared.time();
    const redisNow = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    expect(Math.abs(admission!.expiresAt - 60_000 - redisNow)).toBeLessThan(1000);
  });
});

describe('RedisStore options', () => {
  it('refuses a client with keyPrefix, an unknown option and a bad prefix', () => {
    const prefixed = new Redis(inject('redisUrl'), { keyPrefix: 'app:', lazyConnect: true });
    expect(() => new RedisStore({ client: prefixed })).toThrow(/keyPrefix/);
    expect(() => new RedisStore({ client: shared, prefx: 'x' } as never)).toThrow(WaitgateConfigError);
    expect(() => new RedisStore({ client: shared, prefix: 'a{b}' })).toThrow(/prefix/);
    expect(() => new RedisStore({ client: {} as never })).toThrow(/client/);
    prefixed.disconnect();
  });
});

describe('RedisStore on a server the test owns', () => {
  let server: RedisServer;
  const clients: Redis[] = [];
  const connect = (options: RedisOptions = {}) => {
    const client = new Redis(server.url, options);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterEach(async () => {
    const admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
    await admin.client('UNPAUSE').catch(() => undefined);
    admin.disconnect();
  });
  afterAll(async () => {
    for (const c of clients) c.disconnect();
    await server.stop();
  });

  it('keeps working through SCRIPT FLUSH (ioredis re-sends with EVAL on NOSCRIPT)', async () => {
    const client = connect();
    const queue = new WaitingQueue({ store: new RedisStore({ client }), name: uniqueName('q') });
    await queue.enter('alice');
    await queue.position('alice');
    for (let i = 0; i < 5; i++) {
      await client.script('FLUSH');
      expect(await client.script('EXISTS', scripts.position.sha1, scripts.enterIfAbsent.sha1)).toEqual([0, 0]);
      await queue.enter(`m${i}`);
      expect((await queue.position('alice')).rank).toBe(0);
      // The calls went through EVAL after NOSCRIPT, which loaded the scripts again.
      expect(await client.script('EXISTS', scripts.position.sha1, scripts.enterIfAbsent.sha1)).toEqual([1, 1]);
    }
    const [admission] = await queue.admit();
    await client.script('FLUSH');
    const claim = await queue.claim('alice', admission!.entryToken);
    await client.script('FLUSH');
    expect(await queue.consume(claim)).toBe(true);
  });

  it('answers position under CLIENT PAUSE WRITE at once, and fails writes within the timeout', async () => {
    const client = connect({ maxRetriesPerRequest: 1 });
    const admin = connect();
    // Without abandonment: its presence flushes are writes, which a paused connection holds
    // (and later reads on that connection behind them; see the README on CLIENT PAUSE).
    const queue = new WaitingQueue({ store: new RedisStore({ client }), name: uniqueName('q'), operationTimeoutMs: 300, abandonAfterSeconds: null });
    await queue.enter('alice');
    await admin.client('PAUSE', 3000, 'WRITE');
    const started = Date.now();
    expect((await queue.position('alice')).rank).toBe(0);
    expect((await queue.stats()).waiting).toBe(1);
    expect(Date.now() - started).toBeLessThan(250);
    const writeStarted = Date.now();
    await expect(queue.enter('bob')).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(Date.now() - writeStarted).toBeLessThan(300 + 500);
  });

  it('fails with StoreUnavailableError within operationTimeoutMs under CLIENT PAUSE ALL', async () => {
    const client = connect();
    const admin = connect();
    const queue = new WaitingQueue({ store: new RedisStore({ client }), name: uniqueName('q'), operationTimeoutMs: 300 });
    await queue.enter('alice');
    await admin.client('PAUSE', 3000, 'ALL');
    for (const call of [() => queue.position('alice'), () => queue.enter('bob'), () => queue.admit(), () => queue.stats()]) {
      const started = Date.now();
      await expect(call()).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(Date.now() - started).toBeLessThan(300 + 500);
    }
  });

  it('fails closed when Redis is out of memory: writes refused whole, polls still answered, no member lost', async () => {
    const client = connect({ maxRetriesPerRequest: 1 });
    const queue = new WaitingQueue({ store: new RedisStore({ client }), name: uniqueName('q'), admitRatePerSecond: 100 });
    await Promise.all(Array.from({ length: 200 }, (_, i) => queue.enter(`m${i}`)));
    const [ready] = await queue.admit();
    const before = await queue.stats();
    const used = Number(/used_memory:(\d+)/.exec(await client.info('memory'))![1]);
    await client.config('SET', 'maxmemory', String(Math.max(1, used - 100_000)));
    try {
      for (const call of [() => queue.admit(), () => queue.enter('newcomer'), () => queue.claim(ready!.memberId, ready!.entryToken)]) {
        await expect(call()).rejects.toBeInstanceOf(StoreUnavailableError);
      }
      expect((await queue.position('m150')).status).toBe('WAITING');
      expect(await queue.stats()).toEqual(before);
    } finally {
      await client.config('SET', 'maxmemory', '0');
    }
    // Nothing was half-applied: the same members wait, the same one holds a token.
    expect(await queue.stats()).toEqual(before);
    expect(await queue.state(ready!.memberId)).toBe('READY');
    await sleep(100); // the bucket refills ~10 at 100/s
    expect((await queue.admit()).length).toBeGreaterThan(0);
  });

  it('still settles a committed order when Redis is out of memory (consume and release run allow-oom)', async () => {
    const client = connect({ maxRetriesPerRequest: 1 });
    const queue = new WaitingQueue({ store: new RedisStore({ client }), name: uniqueName('q'), admitRatePerSecond: 100 });
    await Promise.all(Array.from({ length: 50 }, (_, i) => queue.enter(`m${i}`)));
    const [a, b] = await queue.admit();
    const claimA = await queue.claim(a!.memberId, a!.entryToken);
    const claimB = await queue.claim(b!.memberId, b!.entryToken);
    const used = Number(/used_memory:(\d+)/.exec(await client.info('memory'))![1]);
    await client.config('SET', 'maxmemory', String(Math.max(1, used - 100_000)));
    try {
      await expect(queue.enter('newcomer')).rejects.toBeInstanceOf(StoreUnavailableError); // really out of memory
      expect(await queue.consume(claimA)).toBe(true);
      expect(await queue.release(claimB)).toBe(true);
      expect(await queue.leave('m40')).toBe(true);
    } finally {
      await client.config('SET', 'maxmemory', '0');
    }
    expect(await queue.state(a!.memberId)).toBe('NOT_ENTERED');
    expect(await queue.state(b!.memberId)).toBe('READY');
  });

  it('fails closed after FLUSHALL instead of serving an empty queue, until reinitialize()', async () => {
    const client = connect({ maxRetriesPerRequest: 1 });
    const admin = connect();
    const name = uniqueName('q');
    const queue = new WaitingQueue({ store: new RedisStore({ client }), name });
    await queue.enter('alice');
    await queue.enter('bob');
    const [admission] = await queue.admit();
    const claim = await queue.claim(admission!.memberId, admission!.entryToken);

    await admin.flushall(); // this server is the test's own
    const calls = [
      () => queue.enter('carol'),
      () => queue.position('bob'),
      () => queue.admit(),
      () => queue.claim('alice', admission!.entryToken),
      () => queue.consume(claim),
      () => queue.release(claim),
      () => queue.leave('bob'),
      () => queue.stats(),
    ];
    for (const call of calls) {
      const error = await call().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(QueueStateLostError);
      // Its own answer: 503 QUEUE_STATE_LOST, no "try again shortly", no Retry-After; not a StoreUnavailableError.
      expect(error).not.toBeInstanceOf(StoreUnavailableError);
      expect(error).toMatchObject({ code: 'QUEUE_STATE_LOST', statusCode: 503 });
      const answer = toHttpResponse(error);
      expect(answer).toMatchObject({ status: 503, body: { error: { code: 'QUEUE_STATE_LOST' } } });
      expect(answer!.headers['retry-after']).toBeUndefined();
      expect(answer!.body.error.message).not.toMatch(/try again/i);
    }
    expect(await admin.dbsize()).toBe(0); // and nothing was written to the empty state

    await queue.reinitialize();
    expect(await queue.enter('carol')).toMatchObject({ status: 'WAITING', rank: 0, currentTotalWaitingCount: 1 });
  });

  it('warns once when maxmemory-policy is not noeviction', async () => {
    const client = connect();
    await client.config('SET', 'maxmemory-policy', 'allkeys-lru');
    try {
      const queue = new WaitingQueue({ store: new RedisStore({ client }), name: uniqueName('q') });
      const warnings: StoreWarning[] = [];
      queue.on('warning', (w) => warnings.push(w));
      await queue.enter('alice');
      await queue.position('alice');
      await sleep(100);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ code: 'EVICTION_POLICY' });
      expect(warnings[0]!.message).toMatch(/allkeys-lru/);

      await client.config('SET', 'maxmemory-policy', 'noeviction');
      const quiet = new WaitingQueue({ store: new RedisStore({ client }), name: uniqueName('q') });
      const none: StoreWarning[] = [];
      quiet.on('warning', (w) => none.push(w));
      await quiet.enter('alice');
      await sleep(100);
      expect(none).toEqual([]);
    } finally {
      await client.config('SET', 'maxmemory-policy', 'noeviction');
    }
  });

  it('fails within operationTimeoutMs when Redis is stopped, even with ioredis defaults', async () => {
    const own = await startRedisServer();
    const client = new Redis(own.url); // defaults: offline queue on, 20 retries per request
    client.on('error', () => undefined); // the reconnect attempts after the kill are expected
    try {
      const queue = new WaitingQueue({ store: new RedisStore({ client }), name: uniqueName('q'), operationTimeoutMs: 400 });
      await queue.enter('alice');
      own.signal('SIGKILL');
      await sleep(100);
      for (const call of [() => queue.position('alice'), () => queue.enter('bob'), () => queue.admit()]) {
        const started = Date.now();
        await expect(call()).rejects.toBeInstanceOf(StoreUnavailableError);
        expect(Date.now() - started).toBeLessThan(400 + 500);
      }
    } finally {
      client.disconnect();
      await own.stop();
    }
  });
});

describe('RedisStore late-enter fence and Redis clocks', () => {
  /**
   * The shared client, seen through a proxy that moves the clock in replies for one
   * queue's scripts by `skewMs`: that queue's node has a clock ahead of the others'
   * (another master of a Cluster, or the master before a failover).
   */
  function skewedClient(skewedTag: string, skewMs: number): Redis {
    return new Proxy(shared, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (typeof prop !== 'string' || !prop.startsWith('waitgate_') || typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          const reply = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          // Position replies carry Redis time at index 5 (lua/includes/readPosition.lua).
          if (args.some((a) => String(a).includes(skewedTag)) && Array.isArray(reply) && reply.length > 5) reply[5] = Number(reply[5]) + skewMs;
          return reply;
        };
      },
    });
  }

  it("keeps each queue's clock: a node with a clock 60 s ahead does not let another queue's late enter through", async () => {
    const prefix = uniqueName('wg');
    const store = new RedisStore({ client: skewedClient(`{${prefix}:ahead}`, 60_000), prefix });
    await store.enter('ahead', 'a'); // learns queue "ahead" on a node 60 s ahead
    await store.enter('here', 'b'); // learns queue "here" on a true clock
    // An enter whose caller gave up 50 ms ago (its reply would be "unknown") must write nothing.
    const late = await store.enter('here', 'late', { notAfter: performance.now() - 50 }).then(
      () => 'written',
      (error: unknown) => String(error),
    );
    expect(late).toMatch(/after its deadline/);
    expect((await store.position('here', 'late')).status).toBe('NOT_ENTERED');
  });
});

describe('RedisStore token bucket', () => {
  it('keeps the bucket as the exact double MemoryStore keeps, not rounded (both stores admit alike near a whole token)', async () => {
    const prefix = uniqueName('wg');
    const queue = new WaitingQueue({ store: new RedisStore({ client: shared, prefix }), name: 'b', admitRatePerSecond: 1 / 3, admitBurst: 1 });
    for (const m of ['a', 'b', 'c']) await queue.enter(m);
    expect(await queue.admit()).toHaveLength(1); // the full bucket: 1 token, now 0
    const meta = `{${prefix}:b}:meta`;
    const before = Number(await shared.hget(meta, 'bts'));
    await sleep(37);
    expect(await queue.admit()).toHaveLength(0);
    const [bt, bts] = await shared.hmget(meta, 'bt', 'bts');
    // What MemoryStore computes from the same instants (and Lua computes in doubles too).
    const exact = Math.min(1, 0 + ((Number(bts) - before) * (1 / 3)) / 1000);
    expect(Number(bt)).toBe(exact);
  });
});

describeRevokeContract('RedisStore', {
  concurrent: true,
  async create() {
    return { store: new RedisStore({ client: shared, prefix: uniqueName('wg') }), elapse: sleep };
  },
});

describeIdentityContract('RedisStore', {
  concurrent: true,
  async create() {
    return { store: new RedisStore({ client: shared, prefix: uniqueName('wg') }), elapse: sleep };
  },
});
