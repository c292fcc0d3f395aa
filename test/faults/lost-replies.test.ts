// Fault matrix F4, reply lost after execution, on both client libraries: the fault proxy
// lets Redis run a script, drops its reply and resets the client's socket. Then:
//
// - ioredis reconnects and re-sends the command (autoResendUnfulfilledCommands, on by
//   default), so the script runs twice and the caller gets the second run's reply;
// - node-redis re-sends nothing that was written to the closed socket: the call fails
//   with StoreUnavailableError (the outcome is unknown) after the script ran once, and
//   the caller retries, so again the script runs twice.
//
// Each test proves the two runs on the server (INFO commandstats: EVAL/EVALSHA calls,
// with their _RO forms, and the TIME call every mutating script makes exactly once) and
// that the effect is that of one call (SPEC.md, "Outcomes that are unknown, and
// idempotency"). Where the clients differ is the caller's retry: a retried enter,
// consume, release or leave repeats the first call, but a retried admit is a new admit
// (a new admit id: it admits whoever is next, within the bucket) and a retried claim is
// a new claim (a new claim id: IN_USE until the lost call's lease lapses).

import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EntryTokenError, RedisStore, StoreUnavailableError, WaitingQueue, type WaitingQueueOptions } from '../../src/index.js';
import { queueKeys } from '../../src/store/keys.js';
import { scripts, type ScriptName } from '../../src/store/lua.generated.js';
import { FaultProxy, isScript, parseCommand, replyEnd, type CommandMatcher } from '../support/fault-proxy.js';
import { CLIENT_KINDS, connectClient, scriptStats, type ClientKind, type TestClient } from '../support/redis-clients.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { COMPACT_JWS, signingWith } from '../support/signing-keys.js';
import { sleep, uniqueName } from '../support/unique.js';

let server: RedisServer;
let proxy: FaultProxy;
let admin: Redis; // straight to Redis: inspection, and "another app instance"
const clients: Array<{ close(): void }> = [];

beforeAll(async () => {
  server = await startRedisServer();
  proxy = await FaultProxy.start({ port: server.port });
  admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
});
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});
afterAll(async () => {
  admin?.disconnect();
  await proxy?.close();
  await server?.stop();
});

/** Server-side counters: script calls (EVAL, EVALSHA and their _RO forms), failed ones, and TIME calls (one per script run). */
async function commandStats(): Promise<{ scriptCalls: number; failedCalls: number; timeCalls: number }> {
  return scriptStats(await admin.info('commandstats'));
}

/** A WaitingQueue behind the fault proxy, on the client library's defaults (reconnecting after 20 ms). */
async function queueBehindProxy(kind: ClientKind, options: Partial<WaitingQueueOptions> = {}) {
  const client = await connectClient(kind, proxy.url, { reconnectDelay: () => 20 });
  clients.push(client);
  const name = uniqueName('q');
  // Generous: the call must survive the reset and the reconnect.
  const queue = new WaitingQueue({ store: new RedisStore({ client: client.client }), name, operationTimeoutMs: 10_000, ...options });
  // The same queue reached without the proxy, as another app instance would.
  const direct = new WaitingQueue({ store: new RedisStore({ client: admin }), name, ...options });
  return { queue, direct, client, keys: queueKeys('waitgate', name) };
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };
/** Like Promise.all, but settles only when every call has: a batch test counts every call's script run. */
async function all<T>(calls: Array<Promise<T>>): Promise<T[]> {
  const settled = await Promise.allSettled(calls);
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
}

const settle = <T>(pending: Promise<T>): Promise<Settled<T>> =>
  pending.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

interface LostReply<T> {
  /** How the call whose reply was lost settled: ioredis answers (its re-send's reply), node-redis rejects. */
  first: Settled<T>;
  /** The caller's one retry after a StoreUnavailableError (node-redis); null when the call was answered (ioredis). */
  retry: Settled<T> | null;
  /** Times the script reached Redis through the proxy, the retry included. */
  sent: number;
  /** Script calls Redis executed (commandstats delta), the retry included. */
  executions: number;
  /** TIME calls made from inside scripts: one per run of a mutating script. */
  timeCalls: number;
  failedCalls: number;
}

/**
 * Runs `call` with the reply of its `script` lost once, and retries it once if it
 * failed (as a caller told "the outcome is unknown, retrying is safe" does). `whileLost`
 * runs after Redis executed the first copy and before ioredis can re-send it or the
 * caller retries (the proxy blackholes the reconnect meanwhile), as another instance's
 * work would.
 */
async function withLostReply<T>(
  script: ScriptName,
  call: () => Promise<T>,
  whileLost?: () => Promise<void>,
  only: CommandMatcher = () => true,
): Promise<LostReply<T>> {
  const isThisScript = isScript(scripts[script]);
  const match: CommandMatcher = (command) => isThisScript(command) && only(command);
  const before = await commandStats();
  const counter = proxy.count(match);
  const swallowed = proxy.swallowNextReply(match);
  const pending = settle(call());
  await swallowed;
  // Scripts that `whileLost` runs itself are counted apart and left out: while it runs, the
  // re-send cannot reach Redis (the proxy holds the reconnecting client's bytes).
  let others = { scriptCalls: 0, failedCalls: 0, timeCalls: 0 };
  if (whileLost) {
    proxy.startBlackhole();
    try {
      const start = await commandStats();
      await whileLost();
      const end = await commandStats();
      others = {
        scriptCalls: end.scriptCalls - start.scriptCalls,
        failedCalls: end.failedCalls - start.failedCalls,
        timeCalls: end.timeCalls - start.timeCalls,
      };
    } finally {
      proxy.endBlackhole();
    }
  }
  const first = await pending;
  const retry = first.ok ? null : await settle(call());
  counter.stop();
  const after = await commandStats();
  expect(proxy.errors).toEqual([]);
  return {
    first,
    retry,
    sent: counter.count,
    executions: after.scriptCalls - before.scriptCalls - others.scriptCalls,
    timeCalls: after.timeCalls - before.timeCalls - others.timeCalls,
    failedCalls: after.failedCalls - before.failedCalls - others.failedCalls,
  };
}

/**
 * The script ran twice on Redis: once for the lost reply, and once more for ioredis'
 * re-send (the caller saw no failure) or for the caller's retry after node-redis
 * rejected the call with StoreUnavailableError (it re-sends nothing written to a closed
 * socket). (Each test's queue exists before the lost call: a queue's first write also
 * draws its generation id from TIME, which would add one TIME call.)
 */
function expectRanTwice(client: TestClient, lost: LostReply<unknown>) {
  expect(lost.sent).toBe(2);
  expect(lost.executions).toBe(2);
  expect(lost.timeCalls).toBe(2);
  expect(lost.failedCalls).toBe(0);
  expect(client.reconnects).toBeGreaterThanOrEqual(1);
  if (client.kind === 'ioredis') {
    expect(lost.first.ok, 'ioredis re-sent the call and answered it').toBe(true);
    expect(lost.retry).toBeNull();
  } else {
    expect(lost.first.ok, 'node-redis rejected the call whose reply was lost').toBe(false);
    const error = (lost.first as { error: unknown }).error;
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(String((error as Error).cause)).toMatch(/Socket closed unexpectedly|ECONNRESET/);
    expect(lost.retry).not.toBeNull();
  }
}

/** What the caller ends up with: the (re-sent) call's answer on ioredis, its retry's on node-redis. */
function answer<T>(lost: LostReply<T>): T {
  const settled = lost.retry ?? lost.first;
  if (!settled.ok) throw settled.error;
  return settled.value;
}

/** Every token record in the queue, by member. */
async function tokenRecords(keys: ReturnType<typeof queueKeys>) {
  const raw = await admin.hgetall(keys.tokens);
  return Object.entries(raw).map(([memberId, record]) => {
    const [tokenExp, claimExp, claimId, token] = record.split('|');
    return { memberId, tokenExp: Number(tokenExp), claimExp: Number(claimExp), claimId: claimId!, token: token! };
  });
}

/** A compact JWS (header.payload.signature, base64url): what a signed entry pass looks like. */
/** The store's token behind a signed pass (SPEC §15): its `jti`. */
const jtiOf = (pass: string) => (JSON.parse(Buffer.from(pass.split('.')[1]!, 'base64url').toString()) as { jti: string }).jti;

async function redisNowMs(): Promise<number> {
  const [s, us] = await admin.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

describe.each(CLIENT_KINDS)('a lost reply on %s has the effect of one call (F4)', (kind) => {
  it('enter keeps the first sequence number: no duplicate, the same rank and total', async () => {
    const { queue, client, keys } = await queueBehindProxy(kind);
    await queue.enter('alice');
    await queue.enter('bob');

    const lost = await withLostReply('enterIfAbsent', () => queue.enter('carol'));
    expectRanTwice(client, lost);

    // The second run found carol waiting and changed nothing, so its answer is the first one's.
    expect(answer(lost)).toMatchObject({ status: 'WAITING', rank: 2, currentTotalWaitingCount: 3 });
    expect(await admin.zrange(keys.waiting, 0, -1, 'WITHSCORES')).toEqual(['alice', '1', 'bob', '2', 'carol', '3']);
    expect(await admin.hget(keys.meta, 'seq')).toBe('3'); // one sequence number drawn, not two
    expect(await queue.enter('dave')).toMatchObject({ rank: 3, currentTotalWaitingCount: 4 });
    expect(await admin.zscore(keys.waiting, 'dave')).toBe('4');
  });

  it('admit: the lost call admits once; a re-send admits nothing extra, a retry stays within the bucket', async () => {
    const { queue, direct, client, keys } = await queueBehindProxy(kind, { admitRatePerSecond: 1, admitBurst: 10 });
    for (const m of ['m0', 'm1', 'm2', 'm3']) await queue.enter(m);
    const startedAt = await redisNowMs();

    const lost = await withLostReply(
      'popAndIssue',
      () => queue.admit(),
      async () => {
        // Members join after the first run popped m0..m3 and before the re-send or retry.
        for (const m of ['n0', 'n1', 'n2', 'n3']) await direct.enter(m);
      },
    );
    expectRanTwice(client, lost);

    // The first run admitted m0..m3. ioredis' re-send saw its own admit id and admitted
    // nobody, so the caller's answer may be [] although four members got tokens; they
    // learn it by polling. node-redis' caller retried: a new admit (a new admit id), which
    // admitted the four who joined meanwhile, from what was left in the bucket. Whatever
    // the caller got must be what Redis holds.
    const byRetry = kind === 'node-redis' ? ['n0', 'n1', 'n2', 'n3'] : [];
    const records = await tokenRecords(keys);
    expect(records.map((r) => r.memberId).sort()).toEqual(['m0', 'm1', 'm2', 'm3', ...byRetry]);
    const answered = answer(lost);
    if (kind === 'node-redis') expect(answered.map((a) => a.memberId)).toEqual(byRetry);
    for (const a of answered) expect(records.find((r) => r.memberId === a.memberId)?.token).toBe(a.entryToken);
    expect(new Set(records.map((r) => r.token)).size).toBe(records.length); // one token each, none shared
    for (const m of ['m0', 'm1', 'm2', 'm3']) {
      const p = await direct.position(m);
      expect(p.status).toBe('READY');
      expect(p.entryToken).toBe(records.find((r) => r.memberId === m)!.token);
    }
    const stillWaiting = ['n0', 'n1', 'n2', 'n3'].filter((m) => !byRetry.includes(m));
    expect(await admin.zrange(keys.waiting, 0, -1)).toEqual(stillWaiting);
    expect(await queue.stats()).toMatchObject({ waiting: stillWaiting.length, active: records.length });

    // The bucket was spent once per admit that issued tokens: 10 - issued left (plus refill
    // at 1/s), so 16 more waiting members get that many plus at most what refilled.
    const issued = records.length;
    for (let i = 0; i < 16; i++) await direct.enter(`p${i}`);
    const next = await direct.admit();
    const elapsedSeconds = ((await redisNowMs()) - startedAt) / 1000;
    expect(next.length).toBeGreaterThanOrEqual(10 - issued);
    expect(issued + next.length).toBeLessThanOrEqual(10 + Math.floor(1 * elapsedSeconds));
    expect(next.slice(0, stillWaiting.length).map((a) => a.memberId)).toEqual(stillWaiting);
  });

  it('admit: a re-send or retry that arrives after another instance admitted still issues no token twice', async () => {
    // Several app instances run admitters; one instance's admit reply is lost, and before
    // its re-send (or retry) reaches Redis another instance admits. A re-sent call must
    // still be a repeat of the first (admitting nobody), not a fresh admit that issues the
    // same token strings again to other members: two members with one token share a
    // tokenId, and the order table's UNIQUE(tokenId) would refuse the second member's order.
    // A retry is a fresh admit, with fresh tokens.
    const { queue, direct, client, keys } = await queueBehindProxy(kind, { admitRatePerSecond: 1, admitBurst: 10 });
    for (const m of ['m0', 'm1', 'm2', 'm3']) await queue.enter(m);

    const lost = await withLostReply(
      'popAndIssue',
      () => queue.admit(),
      async () => {
        for (const m of ['n0', 'n1']) await direct.enter(m);
        expect((await direct.admit()).map((a) => a.memberId)).toEqual(['n0', 'n1']); // another instance
        for (const m of ['p0', 'p1', 'p2']) await direct.enter(m);
      },
    );
    expectRanTwice(client, lost);

    const byRetry = kind === 'node-redis' ? ['p0', 'p1', 'p2'] : [];
    const records = await tokenRecords(keys);
    const tokens = records.map((r) => r.token);
    expect(new Set(tokens).size, 'every issued token is distinct').toBe(tokens.length);
    // The lost call ran once in effect: it admitted m0..m3, nobody who joined later.
    expect(records.map((r) => r.memberId).sort()).toEqual(['m0', 'm1', 'm2', 'm3', 'n0', 'n1', ...byRetry]);
    expect(answer(lost).map((a) => a.memberId)).toEqual(kind === 'node-redis' ? byRetry : expect.any(Array));
    expect(await admin.zrange(keys.waiting, 0, -1)).toEqual(['p0', 'p1', 'p2'].filter((m) => !byRetry.includes(m)));
    expect(records.length).toBeLessThanOrEqual(10); // within the bucket (the refill in this second is below 1)
  });

  it('claim (signed passes): the token is claimed once, never by two live claims; the caller gets that claim, or IN_USE until its lease lapses', async () => {
    // A short lease on node-redis, where the caller's retry meets the lost call's lease.
    // Signed passes (SPEC §15): the store claims the pass's jti, once, the same way.
    const signing = signingWith();
    const { queue, client, keys } = await queueBehindProxy(kind, kind === 'node-redis' ? { claimTtlSeconds: 1, signing } : { signing });
    await queue.enter('alice');
    const [admission] = await queue.admit();
    expect(admission!.entryToken).toMatch(COMPACT_JWS);

    const lost = await withLostReply('claimToken', () => queue.claim('alice', admission!.entryToken));
    expectRanTwice(client, lost);

    const [record] = await tokenRecords(keys);
    expect(await admin.zrange(keys.leases, 0, -1, 'WITHSCORES')).toEqual(['alice', String(record!.claimExp)]);
    expect((await queue.stats()).claimed).toBe(1);
    let claim;
    if (kind === 'ioredis') {
      // The re-run found its own claim id on the token and answered the first run's lease.
      claim = answer(lost);
      expect(record).toMatchObject({ memberId: 'alice', claimId: claim.claimId, claimExp: claim.expiresAt });
      // Nobody else can claim it while the lease lives, and the returned claim is the live one.
      const other = await queue.claim('alice', admission!.entryToken).catch((e: unknown) => e);
      expect(other).toBeInstanceOf(EntryTokenError);
      expect((other as EntryTokenError).code).toBe('IN_USE');
    } else {
      // The retry carried a new claim id and met the lost call's lease, whose claim id the
      // caller never learned: IN_USE, and the token keeps that one claim until it lapses.
      expect(lost.retry).toMatchObject({ ok: false, error: expect.any(EntryTokenError) });
      expect(((lost.retry as { error: unknown }).error as EntryTokenError).code).toBe('IN_USE');
      expect(record).toMatchObject({ memberId: 'alice', token: jtiOf(admission!.entryToken) });
      expect(record!.claimId).not.toBe('');
      await sleep(Math.max(0, record!.claimExp - (await redisNowMs())) + 50);
      expect(await queue.state('alice')).toBe('READY');
      claim = await queue.claim('alice', admission!.entryToken);
      expect(claim.claimId).not.toBe(record!.claimId);
    }
    expect(await queue.consume(claim)).toBe(true);
    expect(await admin.zcard(keys.consumed)).toBe(1);
    await expect(queue.claim('alice', admission!.entryToken)).rejects.toMatchObject({ code: 'INVALID' }); // used once
  });

  it("a batch of enters (group commit) re-sent whole: every member has one place, in the first run's order", async () => {
    const { queue, client, keys } = await queueBehindProxy(kind);
    await queue.enter('alice');
    // alice's repeated enter goes alone, at once; the ten made while it is in flight
    // gather into one script call, whose reply is lost.
    const members = Array.from({ length: 10 }, (_, i) => `b${i}`);
    const isBatch: CommandMatcher = ({ args }) => args.length >= 2 + 7 + 2 + 2 * members.length; // generation, presence head, 2 per member
    const lost = await withLostReply('enterIfAbsent', () => all([queue.enter('alice'), ...members.map((m) => queue.enter(m))]), undefined, isBatch);
    expect(lost.sent, 'the batch reached Redis twice').toBe(2);
    expect(client.reconnects).toBeGreaterThanOrEqual(1);
    if (kind === 'node-redis') expect(lost.first).toMatchObject({ ok: false, error: expect.any(StoreUnavailableError) });

    const answered = answer(lost);
    expect(answered.map((p) => p.rank)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(await admin.zrange(keys.waiting, 0, -1, 'WITHSCORES')).toEqual(['alice', ...members].flatMap((m, i) => [m, String(i + 1)]));
    expect(await admin.hget(keys.meta, 'seq')).toBe('11'); // one sequence number each, not two
    expect((await queue.stats()).totals.entered).toBe(11);
  });

  it('a batch of claims (group commit, signed passes) re-sent whole: each token has one claim, never two', async () => {
    const { queue, client, keys } = await queueBehindProxy(kind, { admitRatePerSecond: 10, admitBurst: 10, signing: signingWith() });
    const members = Array.from({ length: 6 }, (_, i) => `c${i}`);
    for (const m of members) await queue.enter(m);
    const admissions = await queue.admit();
    expect(admissions).toHaveLength(6);
    for (const a of admissions) expect(a.entryToken).toMatch(COMPACT_JWS);
    const isBatch: CommandMatcher = ({ args }) => args.length >= 2 + 4 + 1 + 4 * 5;
    // The first claim goes alone, at once; the other five gather into one call, whose reply is lost.
    const lost = await withLostReply('claimToken', () => all(admissions.map((a) => queue.claim(a.memberId, a.entryToken))), undefined, isBatch);
    expect(lost.sent, 'the batch reached Redis twice').toBe(2);
    expect(client.reconnects).toBeGreaterThanOrEqual(1);

    const records = await tokenRecords(keys);
    expect(records).toHaveLength(6);
    for (const r of records) expect(r.claimId).not.toBe('');
    expect(await admin.zcard(keys.leases)).toBe(6);
    expect((await queue.stats()).claimed).toBe(6);
    if (kind === 'ioredis') {
      // The re-run found each claim id on its token and answered the first run's leases.
      const claims = answer(lost);
      for (const claim of claims)
        expect(records.find((r) => r.memberId === claim.memberId)).toMatchObject({ claimId: claim.claimId, claimExp: claim.expiresAt });
    } else {
      // The retry carried new claim ids: the lost call's leases hold, so IN_USE.
      expect(lost.retry).toMatchObject({ ok: false, error: expect.any(EntryTokenError) });
      expect(((lost.retry as { error: unknown }).error as EntryTokenError).code).toBe('IN_USE');
    }
  });

  it('consume answers true and the token is gone for good', async () => {
    const { queue, client, keys } = await queueBehindProxy(kind);
    await queue.enter('alice');
    const [admission] = await queue.admit();
    const claim = await queue.claim('alice', admission!.entryToken);

    const lost = await withLostReply('consume', () => queue.consume(claim));
    expectRanTwice(client, lost);

    // The second run found the claim id among the consumed ones and answered true again.
    expect(answer(lost)).toBe(true);
    expect(await admin.hlen(keys.tokens)).toBe(0);
    expect(await admin.zcard(keys.active)).toBe(0);
    expect(await admin.zcard(keys.leases)).toBe(0);
    expect(await admin.zrange(keys.consumed, 0, -1)).toEqual([claim.claimId]);
    expect(await queue.state('alice')).toBe('NOT_ENTERED');
    await expect(queue.claim('alice', admission!.entryToken)).rejects.toMatchObject({ code: 'INVALID' });
    expect(await queue.consume(claim)).toBe(true);
  });

  it('release gives the token back once; the member can claim it again', async () => {
    const { queue, client, keys } = await queueBehindProxy(kind);
    await queue.enter('alice');
    const [admission] = await queue.admit();
    const claim = await queue.claim('alice', admission!.entryToken);

    const lost = await withLostReply('release', () => queue.release(claim));
    expectRanTwice(client, lost);

    // The first run released the token. The second no longer finds this claim on it, so
    // the caller's answer can be false although the release happened: assert the state,
    // not the boolean.
    expect(typeof answer(lost)).toBe('boolean');
    const [record] = await tokenRecords(keys);
    expect(record).toMatchObject({ memberId: 'alice', claimId: '', claimExp: 0, token: admission!.entryToken });
    expect(await admin.zcard(keys.leases)).toBe(0);
    expect(await queue.stats()).toMatchObject({ active: 1, claimed: 0 });
    expect(await queue.state('alice')).toBe('READY');
    const again = await queue.claim('alice', admission!.entryToken);
    expect(again.claimId).not.toBe(claim.claimId);
    expect(await queue.consume(claim)).toBe(false); // fenced by the new claim
    expect(await queue.consume(again)).toBe(true);
  });

  it('leave removes a waiting member and drops a token, once; the others keep their places', async () => {
    const { queue, client, keys } = await queueBehindProxy(kind);
    await queue.enter('holder');
    const [admission] = await queue.admit();
    for (const m of ['alice', 'bob', 'carol']) await queue.enter(m);

    const waiting = await withLostReply('leave', () => queue.leave('bob'));
    expectRanTwice(client, waiting);
    // As with release, the second run finds nothing left to remove: assert the state.
    expect(typeof answer(waiting)).toBe('boolean');
    expect(await admin.zrange(keys.waiting, 0, -1)).toEqual(['alice', 'carol']);
    expect(await queue.position('carol')).toMatchObject({ status: 'WAITING', rank: 1, currentTotalWaitingCount: 2 });
    expect(await queue.state('bob')).toBe('NOT_ENTERED');

    const holding = await withLostReply('leave', () => queue.leave('holder'));
    expectRanTwice(client, holding);
    expect(await admin.hlen(keys.tokens)).toBe(0);
    expect(await queue.stats()).toMatchObject({ waiting: 2, active: 0, claimed: 0 });
    await expect(queue.claim('holder', admission!.entryToken)).rejects.toMatchObject({ code: 'INVALID' });
    // bob may enter again and joins at the back, behind carol.
    expect(await queue.enter('bob')).toMatchObject({ rank: 2 });
  });
});

describe('the fault proxy', () => {
  it('forwards replies of every RESP shape intact (nested arrays, nulls, errors, integers)', async () => {
    const client = new Redis(proxy.url, { retryStrategy: () => 20 });
    clients.push({ close: () => client.disconnect() });
    const key = uniqueName('k');
    await client.rpush(key, 'a', '', 'c');
    expect(await client.eval("return { 1, false, { 'x', { 2, false } }, redis.status_reply('OK') }", 0)).toEqual([1, null, ['x', [2, null]], 'OK']);
    expect(await client.lrange(key, 0, -1)).toEqual(['a', '', 'c']);
    expect(await client.get(uniqueName('missing'))).toBeNull();
    await expect(client.eval("return redis.error_reply('ERR boom')", 0)).rejects.toThrow(/boom/);
    const big = 'x'.repeat(300_000); // arrives in many TCP chunks
    await client.set(key + ':big', big);
    const replies = await client
      .pipeline()
      .get(key + ':big')
      .lrange(key, 0, -1)
      .exec();
    expect(replies).toEqual([
      [null, big],
      [null, ['a', '', 'c']],
    ]);
    expect(proxy.errors).toEqual([]);
  });

  it('finds where each RESP2/RESP3 value ends, and waits for a value cut anywhere', () => {
    const values = [
      '+OK\r\n',
      '-ERR x\r\n',
      ':-12\r\n',
      '$-1\r\n',
      '*-1\r\n',
      '$0\r\n\r\n',
      '$4\r\na\r\nb\r\n', // CRLF inside a bulk string
      '*3\r\n:1\r\n*2\r\n$1\r\nx\r\n*1\r\n$-1\r\n*0\r\n',
      '%2\r\n+a\r\n:1\r\n+b\r\n~1\r\n_\r\n', // RESP3 map and set
      ',1.5\r\n',
      '#t\r\n',
      '(12345678901234567890\r\n',
      '!3\r\nerr\r\n',
      '=7\r\ntxt:abc\r\n',
    ];
    const stream = Buffer.from(values.join('') + '|1\r\n+k\r\n+v\r\n>2\r\n+message\r\n+m\r\n:7\r\n');
    const ends: Array<{ end: number; kind: string }> = [];
    for (let at = 0, v = replyEnd(stream, at); v; at = v.end, v = replyEnd(stream, at)) ends.push(v);
    expect(ends.map((e) => e.kind)).toEqual([...values.map(() => 'reply'), 'out-of-band', 'out-of-band', 'reply']);
    expect(ends.at(-1)!.end).toBe(stream.length);
    for (const value of values) {
      const whole = Buffer.from(value);
      expect(replyEnd(whole, 0)?.end).toBe(whole.length);
      for (let cut = 0; cut < whole.length; cut++) expect(replyEnd(whole.subarray(0, cut), 0)).toBeNull();
    }

    const request = Buffer.from('*3\r\n$7\r\nevalsha\r\n$4\r\na\r\nb\r\n$1\r\n0\r\nPING\r\n');
    const first = parseCommand(request, 0)!;
    expect(first.command).toEqual({ name: 'evalsha', args: ['a\r\nb', '0'] });
    expect(parseCommand(request, first.end)).toEqual({ command: { name: 'ping', args: [] }, end: request.length });
    for (let cut = 0; cut < first.end; cut++) expect(parseCommand(request.subarray(0, cut), 0)).toBeNull();
  });
});
