// RedisStore on node-redis (`redis` 5+, createClient): the whole store contract, and what
// only a real server shows, as on ioredis: NOSCRIPT recovery, CLIENT PAUSE, a stopped
// server within operationTimeoutMs, the eviction-policy warning.
//
// What node-redis re-sends: nothing that was written to a connection that closed (those
// commands are rejected, "Socket closed unexpectedly"); commands issued while it was
// disconnected wait in its offline queue and go out after the reconnection, unless
// `disableOfflineQueue` is set. waitgate's caller has given up on them by then
// (operationTimeoutMs), so they are late: enter carries its deadline in Redis time
// and writes nothing when late; admit carries an admit id (a repeat admits nothing);
// claim, consume and release carry the claim id; touch and leave are idempotent.

import { createClient, type RedisClientType } from 'redis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { scripts } from '../../src/store/lua.generated.js';
import { RedisStore, StoreUnavailableError, WaitingQueue, type StoreWarning } from '../../src/index.js';
import { describeAbandonmentContract } from '../contract/abandonment-contract.js';
import { describeControlsContract } from '../contract/controls-contract.js';
import { describeFiguresContract } from '../contract/figures-contract.js';
import { describeStoreContract } from '../contract/store-contract.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { sleep, uniqueName } from '../support/unique.js';

/** A connected node-redis client whose errors (reconnect attempts) are expected, not thrown. */
async function connect(url: string, options: Parameters<typeof createClient>[0] = {}): Promise<RedisClientType> {
  const client = createClient({ url, ...options }) as RedisClientType;
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

let shared: RedisClientType;
beforeAll(async () => {
  shared = await connect(inject('redisUrl'));
});
afterAll(() => shared.destroy());

const harness = {
  concurrent: true,
  async create() {
    return { store: new RedisStore({ client: shared, prefix: uniqueName('nr') }), elapse: sleep };
  },
};
describeStoreContract('RedisStore on node-redis', harness);
describeControlsContract('RedisStore on node-redis', harness);
describeAbandonmentContract('RedisStore on node-redis', harness);
describeFiguresContract('RedisStore on node-redis', harness);

describe('RedisStore on node-redis, on a server the test owns', () => {
  let server: RedisServer;
  const clients: RedisClientType[] = [];
  const own = async (options: Parameters<typeof createClient>[0] = {}) => {
    const client = await connect(server.url, options);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    for (const c of clients) c.destroy();
    await server.stop();
  });

  it('is told apart from ioredis and takes a cluster too; anything else is refused', () => {
    expect(() => new RedisStore({ client: {} as never })).toThrow(/node-redis client \(createClient\) or cluster \(createCluster\)/);
  });

  it('keeps working through SCRIPT FLUSH (EVAL after NOSCRIPT loads the script again)', async () => {
    const client = await own();
    const queue = new WaitingQueue({ store: new RedisStore({ client }), name: uniqueName('q') });
    await queue.enter('alice');
    for (let i = 0; i < 3; i++) {
      await client.scriptFlush();
      expect(await client.scriptExists([scripts.position.sha1, scripts.enterIfAbsent.sha1])).toEqual([0, 0]);
      await queue.enter(`m${i}`);
      expect((await queue.position('alice')).rank).toBe(0);
      expect(await client.scriptExists([scripts.position.sha1, scripts.enterIfAbsent.sha1])).toEqual([1, 1]);
    }
    const [admission] = await queue.admit();
    await client.scriptFlush();
    const claim = await queue.claim('alice', admission!.entryToken);
    await client.scriptFlush();
    expect(await queue.consume(claim)).toBe(true);
  });

  it('answers position under CLIENT PAUSE WRITE at once, and fails writes within the timeout', async () => {
    const client = await own();
    const admin = await own();
    const queue = new WaitingQueue({ store: new RedisStore({ client }), name: uniqueName('q'), operationTimeoutMs: 300, abandonAfterSeconds: null });
    await queue.enter('alice');
    await admin.sendCommand(['CLIENT', 'PAUSE', '2000', 'WRITE']);
    try {
      const started = Date.now();
      expect((await queue.position('alice')).rank).toBe(0);
      expect((await queue.stats()).waiting).toBe(1);
      expect(Date.now() - started).toBeLessThan(250);
      const writeStarted = Date.now();
      await expect(queue.enter('bob')).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(Date.now() - writeStarted).toBeLessThan(300 + 500);
    } finally {
      await admin.sendCommand(['CLIENT', 'UNPAUSE']);
    }
  });

  it('fails with StoreUnavailableError within operationTimeoutMs under CLIENT PAUSE ALL', async () => {
    const client = await own();
    const admin = await own();
    const queue = new WaitingQueue({ store: new RedisStore({ client }), name: uniqueName('q'), operationTimeoutMs: 300 });
    await queue.enter('alice');
    await admin.sendCommand(['CLIENT', 'PAUSE', '2000', 'ALL']);
    try {
      for (const call of [() => queue.position('alice'), () => queue.enter('bob'), () => queue.admit(), () => queue.stats()]) {
        const started = Date.now();
        await expect(call()).rejects.toBeInstanceOf(StoreUnavailableError);
        expect(Date.now() - started).toBeLessThan(300 + 500);
      }
    } finally {
      await admin.sendCommand(['CLIENT', 'UNPAUSE']);
    }
    // After the pause the late calls ran or were fenced: bob's late enter wrote nothing.
    await sleep(2200);
    expect((await queue.position('bob')).status).toBe('NOT_ENTERED');
  });

  it('fails within operationTimeoutMs when Redis is stopped, with node-redis defaults (offline queue on)', async () => {
    const stopped = await startRedisServer();
    const client = await connect(stopped.url);
    try {
      const queue = new WaitingQueue({ store: new RedisStore({ client }), name: uniqueName('q'), operationTimeoutMs: 400 });
      await queue.enter('alice');
      stopped.signal('SIGKILL');
      await sleep(100);
      for (const call of [() => queue.position('alice'), () => queue.enter('bob'), () => queue.admit()]) {
        const started = Date.now();
        await expect(call()).rejects.toBeInstanceOf(StoreUnavailableError);
        expect(Date.now() - started).toBeLessThan(400 + 500);
      }
    } finally {
      client.destroy();
      await stopped.stop();
    }
  });

  it('warns once when maxmemory-policy is not noeviction', async () => {
    const client = await own();
    await client.configSet('maxmemory-policy', 'allkeys-lru');
    try {
      const queue = new WaitingQueue({ store: new RedisStore({ client }), name: uniqueName('q') });
      const warnings: StoreWarning[] = [];
      queue.on('warning', (w) => warnings.push(w));
      await queue.enter('alice');
      await queue.position('alice');
      await sleep(100);
      expect(warnings.map((w) => w.code)).toEqual(['EVICTION_POLICY']);
    } finally {
      await client.configSet('maxmemory-policy', 'noeviction');
    }
  });
});
