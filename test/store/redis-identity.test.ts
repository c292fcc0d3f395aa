// One place per identity on Redis (SPEC §17), what only Redis can show: two instances with
// their own connections and stores, a refusal that leaves every key of the queue byte for byte
// as it was, the identity never stored as written, and records of identities that left are
// swept as others enter.

import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { IdentityLimitError, RedisStore, WaitingQueue } from '../../src/index.js';
import { hashTag, queueKeys } from '../../src/store/keys.js';
import { uniqueName } from '../support/unique.js';

let one: Redis;
let two: Redis;
beforeAll(() => {
  one = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
  two = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
});
afterAll(() => {
  one.disconnect();
  two.disconnect();
});

/** Every key of one queue with its DUMP, sorted: the queue's whole state in Redis. */
async function dumpQueue(prefix: string, name: string): Promise<Array<[string, string | null]>> {
  const keys = (await one.keys(`${hashTag(prefix, name).replace(/[{}]/g, '\\$&')}*`)).sort();
  return Promise.all(keys.map(async (key) => [key, (await one.dumpBuffer(key))?.toString('base64') ?? null] as [string, string | null]));
}

describe('RedisStore: one place per identity', () => {
  it('two instances on their own connections: the second member id of an identity is refused and no key changes', async () => {
    const prefix = uniqueName('wg');
    const name = uniqueName('drop');
    const first = new WaitingQueue({ store: new RedisStore({ client: one, prefix }), name });
    const second = new WaitingQueue({ store: new RedisStore({ client: two, prefix }), name });
    await first.enter('alice-laptop', { identity: '+41 79 555 01 01' });
    await first.enter('bob');
    const before = await dumpQueue(prefix, name);
    expect(before.map(([key]) => key)).toContain(queueKeys(prefix, name).identities);
    await expect(second.enter('alice-phone', { identity: '+41 79 555 01 01' })).rejects.toBeInstanceOf(IdentityLimitError);
    expect(await dumpQueue(prefix, name)).toEqual(before);
    // The identity is stored as its SHA-256, never as written.
    const record = await one.hgetall(queueKeys(prefix, name).identities);
    expect(Object.keys(record)).toEqual([expect.stringMatching(/^[A-Za-z0-9_-]{43}$/)]);
    expect(JSON.stringify(record)).not.toContain('555');
    expect(Object.values(record)).toEqual(['alice-laptop']);
  });

  it('the record of an identity keeps only members that hold places, and records of identities that left are swept', async () => {
    const prefix = uniqueName('wg');
    const name = uniqueName('sweep');
    const queue = new WaitingQueue({ store: new RedisStore({ client: one, prefix }), name, maxPlacesPerIdentity: 2 });
    const key = queueKeys(prefix, name).identities;
    await queue.enter('gone', { identity: 'left-long-ago' });
    await queue.leave('gone');
    // One identity entering and leaving again and again: its record never grows past its live places.
    for (let i = 0; i < 40; i++) {
      await queue.enter(`m${i}`, { identity: 'busy' });
      if (i > 0) await queue.leave(`m${i - 1}`);
    }
    const records = await one.hgetall(key);
    // Each new place looked at one other identity picked at random: the one that left was swept
    // (the chance that 39 looks all missed it is 2^-39).
    expect(Object.keys(records)).toHaveLength(1);
    expect(Object.values(records)[0]!.split('\n')).toEqual(['m38', 'm39']);
  });
});
