// Group commit on Redis, with both client libraries: concurrent enters, exact position
// look-ups and claims of one instance share script calls, and each caller's outcome is
// the one it would have had alone; one bad or late member leaves the others' intact.

import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EntryTokenError, QueueStateLostError, RedisStore, WaitgateConfigError, WaitingQueue, type MemberSnapshot } from '../../src/index.js';
import type { EnterOptions } from '../../src/store/store.js';
import { queueKeys } from '../../src/store/keys.js';
import { CLIENT_KINDS, connectClient, scriptStats, type TestClient } from '../support/redis-clients.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { uniqueName } from '../support/unique.js';

let server: RedisServer;
let admin: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  admin?.disconnect();
  await server?.stop();
});

const scriptCalls = async () => scriptStats(await admin.info('commandstats')).scriptCalls;
const settle = <T>(p: Promise<T>) => p.then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }));

describe('RedisStore groupCommit option', () => {
  it('accepts true, false and a batch size of 1-256; refuses anything else', () => {
    for (const groupCommit of [true, false, { maxBatchSize: 1 }, { maxBatchSize: 256 }, {}]) {
      expect(() => new RedisStore({ client: admin, groupCommit })).not.toThrow();
    }
    for (const groupCommit of [{ maxBatchSize: 0 }, { maxBatchSize: 257 }, { maxBatchSize: 2.5 }, { size: 4 }, 'yes', null]) {
      expect(() => new RedisStore({ client: admin, groupCommit } as never)).toThrow(WaitgateConfigError);
    }
  });
});

describe.each(CLIENT_KINDS)('group commit on %s', (kind) => {
  let client: TestClient;
  beforeAll(async () => {
    client = await connectClient(kind, server.url);
  });
  afterAll(() => client?.close());

  const queueOn = (groupCommit: boolean, name = uniqueName('gc'), extra = {}) =>
    new WaitingQueue({ store: new RedisStore({ client: client.client, groupCommit }), name, admitRatePerSecond: 1000, admitBurst: 1000, ...extra });

  it('enters 300 concurrent members in a handful of script calls, each with the rank it would have had alone', async () => {
    const on = queueOn(true);
    const off = queueOn(false);
    const ids = Array.from({ length: 300 }, (_, i) => `m${i}`);
    await on.enter('first');
    await off.enter('first');

    let before = await scriptCalls();
    const batched = await Promise.all(ids.map((id) => on.enter(id)));
    const batchedCalls = (await scriptCalls()) - before;
    before = await scriptCalls();
    const alone = await Promise.all(ids.map((id) => off.enter(id)));
    const aloneCalls = (await scriptCalls()) - before;

    expect(aloneCalls).toBe(300);
    // 1 sent at once, 32 (half full, one call out), then batches of 64: 1 + 1 + ceil(267 / 64) = 7.
    expect(batchedCalls).toBeLessThanOrEqual(7);
    const view = (p: { status: string; rank: number | null; currentTotalWaitingCount: number }) => [p.status, p.rank, p.currentTotalWaitingCount];
    expect(batched.map(view)).toEqual(alone.map(view));
    expect(batched.map((p) => p.rank)).toEqual(ids.map((_, i) => i + 1));
    expect((await on.stats()).totals.entered).toBe(301);
  });

  it('answers concurrent exact look-ups in shared calls, equal to the answers one by one', async () => {
    const queue = queueOn(true, uniqueName('gc'), { admitRatePerSecond: 1, admitBurst: 3, abandonAfterSeconds: null }); // no presence writes among the calls counted
    for (let i = 0; i < 50; i++) await queue.enter(`p${i}`);
    expect(await queue.admit()).toHaveLength(3);
    const ids = [...Array.from({ length: 50 }, (_, i) => `p${i}`), 'nobody'];
    const before = await scriptCalls();
    const together = await Promise.all(ids.map((id) => queue.position(id)));
    expect((await scriptCalls()) - before).toBeLessThanOrEqual(3); // 1 at once, 32, then the other 18
    const oneByOne = [];
    for (const id of ids) oneByOne.push(await queue.position(id));
    const view = (p: { status: string; rank: number | null; entryToken: string | null }) => [p.status, p.rank, p.entryToken];
    expect(together.map(view)).toEqual(oneByOne.map(view));
    expect(together.slice(0, 4).map((p) => p.status)).toEqual(['READY', 'READY', 'READY', 'WAITING']);
    expect(together.at(-1)!.status).toBe('NOT_ENTERED');
  });

  it('one late member of a batch of enters writes nothing and fails alone; one with bad arguments too; the others join', async () => {
    const store = new RedisStore({ client: client.client });
    const queue = uniqueName('late');
    await store.enter(queue, 'warm', {}); // the queue exists, and the store knows Redis's clock
    const late = { notAfter: performance.now() - 60_000 };
    const calls = [
      store.enter(queue, 'warm', {}), // in flight: the next four gather into one call
      store.enter(queue, 'a', {}),
      store.enter(queue, 'late', late),
      store.enter(queue, '', {}),
      store.enter(queue, 'b', { notAfter: performance.now() + 60_000 }),
    ].map(settle);
    const [, a, lateOne, empty, b] = await Promise.all(calls);
    expect(a).toMatchObject({ ok: true, value: { status: 'WAITING', rank: 1 } });
    expect(b).toMatchObject({ ok: true, value: { status: 'WAITING', rank: 2 } });
    expect(lateOne).toMatchObject({ ok: false, error: expect.objectContaining({ message: expect.stringMatching(/deadline; nothing written/) }) });
    expect(empty).toMatchObject({ ok: false, error: expect.objectContaining({ message: expect.stringMatching(/bad arguments/) }) });
    const keys = queueKeys('waitgate', queue);
    expect(await admin.zrange(keys.waiting, 0, -1)).toEqual(['warm', 'a', 'b']);
    expect(await admin.hget(keys.meta, 'seq')).toBe('3');
    expect(await admin.hget(keys.meta, 'te')).toBe('3');
  });

  it('a batch mixing new members (one of them twice), a live token and waiting members answers as the enters one by one', async () => {
    // The batch path of lua/enterIfAbsent-10.lua reads every member up front and writes the new
    // places together; a member met twice, a token holder and a waiting member must still see
    // exactly what the same enters sent one by one see.
    const setUp = async (groupCommit: boolean) => {
      const store = new RedisStore({ client: client.client, groupCommit });
      const name = uniqueName('mix');
      const queue = new WaitingQueue({ store, name, admitRatePerSecond: 1000, admitBurst: 1, abandonAfterSeconds: null }); // no signs of life but the batch's
      await queue.enter('held');
      expect((await queue.admit()).map((a) => a.memberId)).toEqual(['held']);
      for (const m of ['w0', 'w1', 'w2']) await queue.enter(m);
      return { store, name };
    };
    const order = ['w0', 'n0', 'held', 'n1', 'n0', 'w2', 'n2', 'n1', 'w1', 'n3', 'n3'];
    const enterAll = (store: RedisStore, name: string) => order.map((m) => settle(store.enter(name, m, { presenceHead: 4 })));

    const batched = await setUp(true);
    const before = await scriptCalls();
    const together = await Promise.all([settle(batched.store.enter(batched.name, 'w0', {})), ...enterAll(batched.store, batched.name)]); // the first in flight: the rest gather
    expect((await scriptCalls()) - before).toBe(2);
    const alone = await setUp(false);
    await alone.store.enter(alone.name, 'w0', {});
    const oneByOne = [];
    for (const m of order) oneByOne.push(await settle(alone.store.enter(alone.name, m, { presenceHead: 4 })));

    const view = (o: { ok: true; value: MemberSnapshot } | { ok: false; error: unknown }) =>
      o.ok
        ? [o.value.status, o.value.rank, o.value.totalWaiting, o.value.entryToken !== null, o.value.score ?? null, o.value.joined ?? false]
        : ['error', String(o.error)];
    expect(together.slice(1).map(view)).toEqual(oneByOne.map(view));
    expect(together.slice(1).map((o) => (o.ok ? o.value.rank : 'error'))).toEqual([0, 3, null, 4, 3, 2, 5, 4, 1, 6, 6]);

    // The same writes: the line, the totals, and the signs of life of those ranked below the head.
    const state = async (name: string) => {
      const keys = queueKeys('waitgate', name);
      const [line, seq, entered, seen] = await Promise.all([
        admin.zrange(keys.waiting, 0, -1, 'WITHSCORES'),
        admin.hget(keys.meta, 'seq'),
        admin.hget(keys.meta, 'te'),
        admin.hkeys(keys.seen),
      ]);
      return { line, seq, entered, seen: seen.sort() };
    };
    const batchedState = await state(batched.name);
    expect(batchedState).toEqual(await state(alone.name));
    expect(batchedState.seen).toEqual(['n0', 'w0', 'w1', 'w2']); // ranks 0-3
  });

  it('a batch whose members carry presence heads of their own, or none, and passthrough tokens answers and writes as one by one', async () => {
    // lua/enterIfAbsent-10.lua takes the batch's presence head once (the first member's) and
    // two values per member; a member with another head, or a token, sends its own.
    const setUp = async (groupCommit: boolean) => {
      const store = new RedisStore({ client: client.client, groupCommit });
      const name = uniqueName('heads');
      const queue = new WaitingQueue({ store, name, abandonAfterSeconds: null });
      for (const m of ['w0', 'w1', 'w2']) await queue.enter(m);
      return { store, name, queue };
    };
    const order: Array<[string, EnterOptions]> = [
      ['a', { presenceHead: 10 }], // the batch's head: rank 3, recorded
      ['b', {}], // no head: nothing recorded
      ['c', { presenceHead: 2 }], // rank 5: beyond its head
      ['w2', { presenceHead: 5 }], // rank 2: recorded
      ['w1', { presenceHead: 1 }], // rank 1: beyond its head
      ['d', { presenceHead: 10 }],
    ];
    const passthrough = (tag: string): Array<[string, EnterOptions]> => [
      ['p0', { token: `${tag}-t0|with|bars`, tokenTtlMs: 60_000, presenceHead: 10 }],
      ['p1', { presenceHead: 10 }], // no token: NEED_TOKEN
      ['w0', { presenceHead: 10 }], // waiting: stays
      ['p2', { token: `${tag}-t2`, tokenTtlMs: 60_000 }],
    ];
    const view = (o: { ok: true; value: MemberSnapshot } | { ok: false; error: unknown }) =>
      o.ok
        ? [o.value.status, o.value.rank, o.value.totalWaiting, o.value.entryToken?.replace(/^(on|off)-/, '') ?? null, o.value.score ?? null, o.value.joined ?? false, o.value.needsToken ?? false]
        : ['error', String(o.error)];
    const state = async (name: string) => {
      const keys = queueKeys('waitgate', name);
      const [line, tokens, seen] = await Promise.all([admin.zrange(keys.waiting, 0, -1, 'WITHSCORES'), admin.hkeys(keys.tokens), admin.hkeys(keys.seen)]);
      return { line, tokens: tokens.sort(), seen: seen.sort() };
    };

    const batched = await setUp(true);
    const alone = await setUp(false);
    const run = async (setup: Awaited<ReturnType<typeof setUp>>, members: Array<[string, EnterOptions]>, together: boolean) => {
      if (!together) {
        const out = [];
        for (const [m, options] of members) out.push(await settle(setup.store.enter(setup.name, m, options)));
        return out;
      }
      const before = await scriptCalls();
      // The first in flight: the rest gather into one call.
      const out = await Promise.all([settle(setup.store.enter(setup.name, 'w0', {})), ...members.map(([m, options]) => settle(setup.store.enter(setup.name, m, options)))]);
      expect((await scriptCalls()) - before).toBe(2);
      return out.slice(1);
    };
    await alone.store.enter(alone.name, 'w0', {});
    const first = await run(batched, order, true);
    expect(first.map(view)).toEqual((await run(alone, order, false)).map(view));
    expect(first.map((o) => (o.ok ? o.value.rank : 'error'))).toEqual([3, 4, 5, 2, 1, 6]);
    expect((await state(batched.name)).seen).toEqual(['a', 'd', 'w2']);

    await batched.queue.setControls({ mode: 'passthrough' });
    await alone.queue.setControls({ mode: 'passthrough' });
    await alone.store.enter(alone.name, 'w0', {});
    const second = await run(batched, passthrough('on'), true);
    expect(second.map(view)).toEqual((await run(alone, passthrough('off'), false)).map(view));
    expect(second.map((o) => (o.ok ? [o.value.status, o.value.entryToken] : 'error'))).toEqual([
      ['READY', 'on-t0|with|bars'],
      ['NOT_ENTERED', null],
      ['WAITING', null],
      ['READY', 'on-t2'],
    ]);
    const [b, a] = [await state(batched.name), await state(alone.name)];
    expect(b).toEqual(a);
    expect(b.tokens).toEqual(['p0', 'p2']);
  });

  it('claims in one call keep their own outcomes: claimed, a wrong token, in use, and a bad lease', async () => {
    const queue = queueOn(true, uniqueName('claims'));
    for (const m of ['c0', 'c1', 'c2', 'c3']) await queue.enter(m);
    const admissions = await queue.admit();
    const token = (m: string) => admissions.find((a) => a.memberId === m)!.entryToken;
    const held = await queue.claim('c3', token('c3'));
    const outcomes = await Promise.all(
      [
        queue.claim('c0', token('c0')), // in flight: the rest gather
        queue.claim('c1', token('c1')),
        queue.claim('c2', 'not-the-token'),
        queue.claim('c3', token('c3')),
        queue.claim('c2', token('c2')),
      ].map(settle),
    );
    expect(outcomes[0]).toMatchObject({ ok: true, value: { memberId: 'c0' } });
    expect(outcomes[1]).toMatchObject({ ok: true, value: { memberId: 'c1' } });
    expect(outcomes[2]).toMatchObject({ ok: false, error: expect.any(EntryTokenError) });
    expect(((outcomes[2] as { error: EntryTokenError }).error).code).toBe('INVALID');
    expect(((outcomes[3] as { error: EntryTokenError }).error).code).toBe('IN_USE');
    expect(outcomes[4]).toMatchObject({ ok: true, value: { memberId: 'c2' } });
    expect(held.memberId).toBe('c3');

    // A claim with a bad lease, sent to the store directly, fails alone.
    const store = new RedisStore({ client: client.client });
    const name = uniqueName('claims2');
    const q2 = new WaitingQueue({ store, name, admitRatePerSecond: 100, admitBurst: 100 });
    for (const m of ['d0', 'd1', 'd2']) await q2.enter(m);
    const [d0, d1, d2] = await q2.admit();
    const raw = await Promise.all(
      [
        store.claim(name, { memberId: 'd0', token: d0!.entryToken, claimId: 'k0', leaseMs: 5000 }),
        store.claim(name, { memberId: 'd1', token: d1!.entryToken, claimId: 'k1', leaseMs: -1 }),
        store.claim(name, { memberId: 'd2', token: d2!.entryToken, claimId: 'k2', leaseMs: 5000 }),
      ].map(settle),
    );
    expect(raw[0]).toMatchObject({ ok: true, value: { status: 'CLAIMED' } });
    expect(raw[1]).toMatchObject({ ok: false, error: expect.objectContaining({ message: expect.stringMatching(/bad arguments/) }) });
    expect(raw[2]).toMatchObject({ ok: true, value: { status: 'CLAIMED' } });
    expect(await admin.zrange(queueKeys('waitgate', name).leases, 0, -1)).toEqual(['d0', 'd2']);
  });

  it('a batch whose queue state vanished fails every caller in it with QueueStateLostError', async () => {
    const name = uniqueName('lost');
    const queue = queueOn(true, name);
    await queue.enter('a');
    await admin.del(queueKeys('waitgate', name).meta);
    const outcomes = await Promise.all(['a', 'b', 'c', 'd'].map((m) => settle(queue.enter(m))));
    for (const o of outcomes) expect(o).toMatchObject({ ok: false, error: expect.any(QueueStateLostError) });
  });
});
