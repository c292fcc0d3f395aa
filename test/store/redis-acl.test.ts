// S7: a least-privilege Redis user. The ACL is the one docs/redis.md documents in "Redis in
// production" (parsed from that page, so the test follows the docs): the whole store
// contract runs as that user, FLUSHALL and CONFIG are denied (NOPERM), keys outside the
// prefix are denied even inside scripts, and the eviction-policy check still works
// through INFO.

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RedisStore, StoreUnavailableError, WaitingQueue, type StoreWarning } from '../../src/index.js';
import { scripts } from '../../src/store/lua.generated.js';
import { describeAbandonmentContract } from '../contract/abandonment-contract.js';
import { describeControlsContract } from '../contract/controls-contract.js';
import { describeCohortContract } from '../contract/cohort-contract.js';
import { describeFiguresContract } from '../contract/figures-contract.js';
import { describeStoreContract } from '../contract/store-contract.js';
import { expectOneStepHeard } from '../support/head-moves.js';
import { sleep, uniqueName } from '../support/unique.js';

/** Splits a shell command line as sh would for the README's quoting (single quotes, backslash-newline). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const m of line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) words.push(m[1] ?? m[2] ?? m[3]!);
  return words;
}

/** The `ACL SETUSER` rules of docs/redis.md's least-privilege section. */
function readmeAcl(): { user: string; password: string; rules: string[] } {
  const readme = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'redis.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Redis in production'));
  const block = /Least-privilege user[\s\S]*?```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('docs/redis.md has no ```sh block in the "Least-privilege user" item of "Redis in production"');
  const words = shellWords(block.replace(/\\\n/g, ' '));
  const at = words.findIndex((w, i) => w.toUpperCase() === 'ACL' && words[i + 1]?.toUpperCase() === 'SETUSER');
  if (at < 0) throw new Error(`README's least-privilege block is not an ACL SETUSER command: ${block}`);
  const rules = words.slice(at + 3);
  const password = rules.find((r) => r.startsWith('>'))?.slice(1);
  if (!password) throw new Error('README ACL sets no password');
  return { user: words[at + 2]!, password, rules };
}

/** Every Redis command the Lua scripts call, lower-case. */
const scriptCommands = [
  ...new Set(Object.values(scripts).flatMap((s) => [...s.lua.matchAll(/redis\.p?call\('([A-Za-z]+)'/g)].map((m) => m[1]!.toLowerCase()))),
].sort();

const PREFIX = 'waitgate'; // the prefix the README ACL is written for ('~{waitgate:*')
const acl = readmeAcl();
const aclUser = `waitgate-acl-${randomBytes(4).toString('hex')}`;
let admin: Redis;
let user: Redis;

beforeAll(async () => {
  if (!inject('redisIsOurs')) {
    throw new Error(
      'redis-acl.test.ts creates an ACL user, so it needs a Redis server the tests started (unset REDIS_URL to let the global setup spawn one); REDIS_URL points at a server that is not ours.',
    );
  }
  admin = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
  await admin.call('ACL', 'SETUSER', aclUser, 'reset', ...acl.rules);
  user = new Redis(inject('redisUrl'), { username: aclUser, password: acl.password, maxRetriesPerRequest: 1 });
  await user.ping().catch(() => undefined); // PING is not granted; connecting (AUTH, INFO ready check) is what matters
  expect(user.status).toBe('ready');
});
afterAll(async () => {
  user?.disconnect();
  if (admin) {
    await admin.call('ACL', 'DELUSER', aclUser).catch(() => undefined);
    admin.disconnect();
  }
});

describe('the least-privilege ACL of docs/redis.md', () => {
  it('is a user limited to the {waitgate: key prefix, with every other command class removed', () => {
    expect(acl.rules).toContain('~{waitgate:*');
    expect(acl.rules).toContain('-@all');
    expect(acl.rules).toContain('resetkeys');
  });

  it('grants every command the Lua scripts run (ACLs are checked inside scripts), plus EVAL, EVALSHA and INFO', async () => {
    const denied: string[] = [];
    for (const command of [...scriptCommands, 'eval', 'evalsha', 'info']) {
      // ACL DRYRUN checks a command without running it; give it a key under the prefix for every argument.
      const info = (await admin.call('COMMAND', 'INFO', command)) as Array<[string, number]>;
      const arity = Math.abs(info[0]![1]);
      const args =
        command === 'eval' ? ['return 1', '0'] : command === 'evalsha' ? ['0'.repeat(40), '0'] : Array.from({ length: arity - 1 }, () => `{${PREFIX}:q}:k`);
      const answer = String(await admin.call('ACL', 'DRYRUN', aclUser, command, ...args).catch((e: Error) => e.message));
      if (answer !== 'OK') denied.push(`${command}: ${answer}`);
    }
    // A miss here means the README's ACL breaks that script for its users: NOPERM at run time.
    expect(denied, `docs/redis.md's ACL lacks commands the scripts use (${Object.keys(scripts).join(', ')})`).toEqual([]);
  });

  it('denies FLUSHALL, CONFIG, DEBUG and KEYS (NOPERM)', async () => {
    for (const call of [
      () => user.flushall(),
      () => user.flushdb(),
      () => user.config('GET', 'maxmemory'),
      () => user.config('SET', 'maxmemory-policy', 'allkeys-lru'),
      () => user.keys('*'),
    ]) {
      await expect(call()).rejects.toThrow(/NOPERM/);
    }
    // DEBUG is refused before ACLs here (enable-debug-command no); the ACL denies it as well.
    expect(await admin.call('ACL', 'DRYRUN', aclUser, 'DEBUG', 'SLEEP', '0')).toMatch(/no permissions/);
    expect(await admin.call('ACL', 'DRYRUN', aclUser, 'FLUSHALL')).toMatch(/no permissions/);
    expect(await admin.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
  });

  it('denies keys outside the prefix, even to the library’s own scripts', async () => {
    await expect(user.hget('{other:q}:meta', 'gen')).rejects.toThrow(/NOPERM/);
    const queue = new WaitingQueue({ store: new RedisStore({ client: user, prefix: 'other' }), name: uniqueName('q') });
    const error = await queue.enter('alice').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(String((error as Error).cause)).toMatch(/NOPERM/);
  });

  it('still runs the eviction-policy check through INFO', async () => {
    expect(await user.info('memory')).toMatch(/^maxmemory_policy:noeviction/m);
    const collect = async () => {
      const queue = new WaitingQueue({ store: new RedisStore({ client: user, prefix: PREFIX }), name: uniqueName('q') });
      const warnings: StoreWarning[] = [];
      queue.on('warning', (w) => warnings.push(w));
      await queue.enter('alice');
      await sleep(100);
      return warnings;
    };
    expect(await collect()).toEqual([]);
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    try {
      const warnings = await collect();
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ code: 'EVICTION_POLICY' }); // read, not EVICTION_POLICY_UNKNOWN
      expect(warnings[0]!.message).toMatch(/allkeys-lru/);
    } finally {
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
    }
  });
});

describe('the subscriber as the least-privilege user', () => {
  it('hears the admission steps of a queue under the prefix (PUBLISH in the admit script, SUBSCRIBE)', async () => {
    const subscriber = user.duplicate();
    try {
      await expectOneStepHeard(new RedisStore({ client: user, subscriber, prefix: PREFIX }), 3, 1000);
    } finally {
      subscriber.disconnect();
    }
  });
});

describe('an ACL of an earlier README, without the channels', () => {
  it('still admits (the push is skipped), and a subscriber that cannot subscribe is reported, not live, and tried again', { timeout: 20_000 }, async () => {
    const older = `${aclUser}-nochannels`;
    const rules = acl.rules.filter((r) => !r.startsWith('&') && r !== '+publish' && r !== '+subscribe');
    await admin.call('ACL', 'SETUSER', older, 'reset', ...rules);
    const client = new Redis(inject('redisUrl'), { username: older, password: acl.password, maxRetriesPerRequest: 1 });
    const subscriber = client.duplicate();
    try {
      const store = new RedisStore({ client, subscriber, prefix: PREFIX });
      const name = uniqueName('q');
      const errors: Error[] = [];
      const watch = store.watchHeadMoves(
        name,
        () => undefined,
        (e) => errors.push(e),
      );
      const queue = new WaitingQueue({ store, name, admitRatePerSecond: 3, abandonAfterSeconds: null });
      for (const id of ['a', 'b', 'c', 'd']) await queue.enter(id);
      expect(await queue.admit()).toHaveLength(3);
      for (let i = 0; i < 100 && errors.length === 0; i++) await sleep(10);
      expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/cannot subscribe.*NOPERM/)]);
      expect(watch.live()).toBe(false);
      // The operator grants the channels: a later check subscribes again (every 5 s), and it is live.
      await admin.call('ACL', 'SETUSER', older, `&{${PREFIX}:*`, '+subscribe');
      for (let i = 0; i < 100 && !watch.live(); i++) await sleep(100);
      expect(watch.live()).toBe(true);
      expect(errors).toHaveLength(1); // reported once
    } finally {
      subscriber.disconnect();
      client.disconnect();
      await admin.call('ACL', 'DELUSER', older);
    }
  });
});

// The whole store contract, as the least-privilege user.
describeStoreContract('RedisStore as the README least-privilege ACL user', {
  concurrent: true,
  async create() {
    return { store: new RedisStore({ client: user, prefix: PREFIX }), elapse: sleep };
  },
});

describeControlsContract('RedisStore as the README least-privilege ACL user', {
  concurrent: true,
  async create() {
    return { store: new RedisStore({ client: user, prefix: PREFIX }), elapse: sleep };
  },
});

describeCohortContract('RedisStore as the README least-privilege ACL user', {
  concurrent: true,
  async create() {
    return { store: new RedisStore({ client: user, prefix: PREFIX }), elapse: sleep };
  },
});

describeAbandonmentContract('RedisStore as the README least-privilege ACL user', {
  concurrent: true,
  async create() {
    return { store: new RedisStore({ client: user, prefix: PREFIX }), elapse: sleep };
  },
});

describeFiguresContract('RedisStore as the README least-privilege ACL user', {
  concurrent: true,
  async create() {
    return { store: new RedisStore({ client: user, prefix: PREFIX }), elapse: sleep };
  },
});
