// The gate's verdicts cost Redis nothing (SPEC §17): a challenged or shadowed enter, and a
// shadowed member's polls and leave, send no command at all to a redis-server this file
// spawned (INFO commandstats unchanged, every key's value unchanged). Shadowed members
// are never admitted and take no place ahead of real ones.

import type { AddressInfo } from 'node:net';
import express from 'express';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore, WaitingQueue, type Position } from '../../src/index.js';
import { queueRoutes } from '../../src/http/express.js';
import { requestHeader } from '../../src/http/request-header.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

let server: RedisServer;
let client: Redis;
let admin: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  client = new Redis(server.url, { maxRetriesPerRequest: 1 });
  admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
});

afterAll(async () => {
  client?.disconnect();
  admin?.disconnect();
  await server?.stop();
});

/** Every key and its serialised value. */
async function dataset(): Promise<Map<string, string | null>> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await admin.scan(cursor, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  const values = new Map<string, string | null>();
  for (const key of keys.sort()) values.set(key, (await admin.dumpBuffer(key))?.toString('base64') ?? null);
  return values;
}

/** Calls per command since the server started, without INFO itself (which this reading adds). */
async function commandstats(): Promise<Record<string, string>> {
  const text = await admin.info('commandstats');
  const calls: Record<string, string> = {};
  for (const line of text.split('\r\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (match && match[1] !== 'info') calls[match[1]!] = match[2]!;
  }
  return calls;
}

async function start(queue: WaitingQueue) {
  const app = express();
  const gate = (req: unknown) => ({ verdict: (requestHeader(req, 'x-verdict') ?? 'allow') as 'allow' | 'challenge' | 'shadow', challenge: { kind: 'test' } });
  app.use('/queue', queueRoutes(queue, { memberId: (req) => req.get('x-member'), gate }));
  const listening = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => listening.once('listening', resolve));
  const url = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
  const call = async (method: string, path: string, member: string, verdict = 'allow') =>
    fetch(url + path, { method, headers: { 'x-member': member, 'x-verdict': verdict } });
  return { call, close: () => new Promise<void>((resolve) => listening.close(() => resolve())) };
}

describe('gate on RedisStore', () => {
  it('challenge and shadow send Redis no command and change no key; shadowed members are never admitted nor counted ahead', async () => {
    const queue = new WaitingQueue({ store: new RedisStore({ client, prefix: 'gate' }), name: 'drop', admitRatePerSecond: 1000 });
    const { call, close } = await start(queue);
    try {
      // A real member first: the scripts are loaded and the queue's keys exist.
      expect((await call('POST', '/queue/enter', 'human-0')).status).toBe(200);
      const keysBefore = await dataset();
      expect(keysBefore.size).toBeGreaterThan(0);
      const statsBefore = await commandstats();
      for (let i = 0; i < 20; i++) {
        const challenged = await call('POST', '/queue/enter', `challenged-${i}`, 'challenge');
        expect(challenged.status).toBe(401);
        expect(((await challenged.json()) as { error: { code: string } }).error.code).toBe('CHALLENGE_REQUIRED');
        const shadowed = await call('POST', '/queue/enter', `bot-${i}`, 'shadow');
        expect(((await shadowed.json()) as Position).status).toBe('WAITING');
        expect(((await (await call('GET', '/queue/position', `bot-${i}`)).json()) as Position).status).toBe('WAITING');
      }
      expect((await call('DELETE', '/queue', 'bot-0')).status).toBe(204);
      expect(await commandstats()).toEqual(statsBefore);
      expect(await dataset()).toEqual(keysBefore);

      // Real members entering after the bots are ranked as if the bots were not there.
      const late = (await (await call('POST', '/queue/enter', 'human-1')).json()) as Position;
      expect(late.rank).toBe(1);
      const stats = await queue.stats();
      expect(stats.waiting).toBe(2);
      expect(stats.totals.shadowed).toBe(20);
      const admitted = new Set<string>();
      for (let i = 0; i < 50; i++) for (const a of await queue.admit()) admitted.add(a.memberId);
      expect([...admitted].sort()).toEqual(['human-0', 'human-1']);
      for (let i = 1; i < 20; i++) {
        const polled = (await (await call('GET', '/queue/position', `bot-${i}`)).json()) as Position;
        expect(polled.status).toBe('WAITING');
        expect(polled.rank).toBeGreaterThanOrEqual(1);
      }
    } finally {
      await close();
    }
  });
});
