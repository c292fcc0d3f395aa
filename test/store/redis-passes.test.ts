// Signed passes on a real Redis, through every adapter: forged, expired, other-queue and
// other-member passes cost Redis no command (INFO commandstats of a server this file spawned
// itself, unchanged), and a valid pass is claimed and consumed once by its jti.

import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { RedisStore, WaitingQueue } from '../../src/index.js';
import { PASS_APPS, type PassApp } from '../http/pass-apps.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { signingWith } from '../support/signing-keys.js';
import { uniqueName } from '../support/unique.js';

let server: RedisServer;
let client: Redis;
let app: PassApp | undefined;

beforeAll(async () => {
  server = await startRedisServer();
  client = new Redis(server.url, { maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  client.disconnect();
  await server.stop();
});
afterEach(async () => {
  vi.useRealTimers();
  await app?.close();
  app = undefined;
});

/** Every command's call count, but INFO's own (reading the counts is a command). */
async function commandCounts(): Promise<Record<string, number>> {
  const info = await client.info('commandstats');
  const counts: Record<string, number> = {};
  for (const [, command, calls] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) if (command !== 'info') counts[command!] = Number(calls);
  return counts;
}

describe.each(Object.keys(PASS_APPS))('signed passes on Redis, %s', (name) => {
  it('refused passes cost no Redis command; a valid one is claimed, consumed, then refused', async () => {
    const signing = signingWith();
    const queue = new WaitingQueue({ store: new RedisStore({ client, prefix: uniqueName('wg') }), name: 'drop', entryTokenTtlSeconds: 60, signing });
    app = await PASS_APPS[name]!(queue);
    const post = (member: string, token: string) => fetch(`${app!.url}/orders`, { method: 'POST', headers: { 'x-member': member, 'x-entry-token': token } });
    const passOf = async (q: WaitingQueue, member: string) => (await q.enter(member), (await q.admit())[0]!.entryToken);
    const pass = await passOf(queue, 'alice');
    const otherStore = new RedisStore({ client, prefix: uniqueName('wg') });
    const forged = await passOf(new WaitingQueue({ store: otherStore, name: 'drop', signing: signingWith() }), 'alice');
    const otherQueue = await passOf(new WaitingQueue({ store: otherStore, name: 'other', signing }), 'alice');

    const before = await commandCounts();
    for (const [member, token] of [
      ['alice', forged],
      ['alice', otherQueue],
      ['bob', pass],
      ['alice', pass.slice(0, -3) + 'AAA'],
    ]) {
      const response = await post(member!, token!);
      expect(response.status).toBe(401);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('ENTRY_TOKEN_INVALID');
    }
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 70_000 });
    expect((await post('alice', pass)).status).toBe(401);
    vi.useRealTimers();
    expect(await commandCounts()).toEqual(before);

    expect((await post('alice', pass)).status).toBe(201);
    await expect.poll(async () => (await queue.position('alice')).status).toBe('NOT_ENTERED');
    expect((await post('alice', pass)).status).toBe(401);
    expect((await commandCounts()).evalsha ?? 0).toBeGreaterThan(before.evalsha ?? 0);
  });
});
