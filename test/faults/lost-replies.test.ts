// Fault matrix F4, reply lost after execution: the fault proxy lets Redis run a script,
// drops its reply and resets the client's socket; ioredis reconnects and re-sends the
// command (autoResendUnfulfilledCommands, on by default), so the script runs twice. Each
// test proves the double run on the server (INFO commandstats: EVAL/EVALSHA calls, and
// the TIME call every mutating script makes exactly once) and that the effect is that of
// one call (SPEC.md, "Outcomes that are unknown, and idempotency").

import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EntryTokenError, RedisStore, WaitingQueue, type WaitingQueueOptions } from '../../src/index.js';
import { queueKeys } from '../../src/store/keys.js';
import { scripts, type ScriptName } from '../../src/store/lua.generated.js';
import { FaultProxy, isScript, parseCommand, replyEnd } from '../support/fault-proxy.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { uniqueName } from '../support/unique.js';

let server: RedisServer;
let proxy: FaultProxy;
let admin: Redis; // straight to Redis: inspection, and "another app instance"
const clients: Redis[] = [];

beforeAll(async () => {
  server = await startRedisServer();
  proxy = await FaultProxy.start({ port: server.port });
  admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
});
afterEach(() => {
  for (const c of clients.splice(0)) c.disconnect();
});
afterAll(async () => {
  admin?.disconnect();
  await proxy?.close();
  await server?.stop();
});

/** Server-side counters: script calls (EVAL + EVALSHA), failed ones, and TIME calls (one per script run). */
async function commandStats(): Promise<{ scriptCalls: number; failedCalls: number; timeCalls: number }> {
  const info = await admin.info('commandstats');
  const stat = (command: string, field: string) => Number(new RegExp(`^cmdstat_${command}:.*\\b${field}=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  return {
    scriptCalls: stat('eval', 'calls') + stat('evalsha', 'calls'),
    failedCalls: stat('eval', 'failed_calls') + stat('evalsha', 'failed_calls'),
    timeCalls: stat('time', 'calls'),
  };
}

/** A WaitingQueue behind the fault proxy, on ioredis defaults (which re-send after a reconnect). */
function queueBehindProxy(options: Partial<WaitingQueueOptions> = {}) {
  const client = new Redis(proxy.url, { retryStrategy: () => 20 });
  clients.push(client);
  const socketErrors: string[] = [];
  client.on('error', (e: Error) => socketErrors.push(e.message));
  let reconnects = 0;
  client.on('reconnecting', () => reconnects++);
  const name = uniqueName('q');
  // Generous: the call must survive the reset and the reconnect.
  const queue = new WaitingQueue({ store: new RedisStore({ client }), name, operationTimeoutMs: 10_000, ...options });
  // The same queue reached without the proxy, as another app instance would.
  const direct = new WaitingQueue({ store: new RedisStore({ client: admin }), name, ...options });
  return { queue, direct, keys: queueKeys('waitgate', name), socketErrors, reconnects: () => reconnects };
}

interface LostReply<T> {
  result: T;
  /** Times the script reached Redis through the proxy. */
  sent: number;
  /** Script calls Redis executed (commandstats delta). */
  executions: number;
  /** TIME calls made from inside scripts: one per run of a mutating script. */
  timeCalls: number;
  failedCalls: number;
}

/**
 * Runs `call` with the reply of its `script` lost once. `whileLost` runs after Redis
 * executed the first copy and before ioredis can re-send it (the proxy blackholes the
 * reconnect meanwhile), as another instance's work would.
 */
async function withLostReply<T>(script: ScriptName, call: () => Promise<T>, whileLost?: () => Promise<void>): Promise<LostReply<T>> {
  const match = isScript(scripts[script]);
  const before = await commandStats();
  const counter = proxy.count(match);
  const swallowed = proxy.swallowNextReply(match);
  const pending = call();
  pending.catch(() => undefined);
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
  const result = await pending;
  counter.stop();
  const after = await commandStats();
  return {
    result,
    sent: counter.count,
    executions: after.scriptCalls - before.scriptCalls - others.scriptCalls,
    timeCalls: after.timeCalls - before.timeCalls - others.timeCalls,
    failedCalls: after.failedCalls - before.failedCalls - others.failedCalls,
  };
}

/**
 * The script ran twice on Redis: once for the lost reply, once for ioredis' re-send.
 * (Each test's queue exists before the lost call: a queue's first write also draws its
 * generation id from TIME, which would add one TIME call.)
 */
function expectRanTwice(lost: LostReply<unknown>, reconnects: number) {
  expect(lost.sent).toBe(2);
  expect(lost.executions).toBe(2);
  expect(lost.timeCalls).toBe(2);
  expect(lost.failedCalls).toBe(0);
  expect(reconnects).toBeGreaterThanOrEqual(1);
}

/** Every token record in the queue, by member. */
async function tokenRecords(keys: ReturnType<typeof queueKeys>) {
  const raw = await admin.hgetall(keys.tokens);
  return Object.entries(raw).map(([memberId, record]) => {
    const [tokenExp, claimExp, claimId, token] = record.split('|');
    return { memberId, tokenExp: Number(tokenExp), claimExp: Number(claimExp), claimId: claimId!, token: token! };
  });
}

async function redisNowMs(): Promise<number> {
  const [s, us] = await admin.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

describe('a lost reply, re-sent by ioredis, has the effect of one call (F4)', () => {
  it('enter keeps the first sequence number: no duplicate, the same rank and total', async () => {
    const { queue, keys, reconnects } = queueBehindProxy();
    await queue.enter('alice');
    await queue.enter('bob');

    const lost = await withLostReply('enterIfAbsent', () => queue.enter('carol'));
    expectRanTwice(lost, reconnects());

    // The re-run found carol waiting and changed nothing, so its answer is the first one's.
    expect(lost.result).toMatchObject({ status: 'WAITING', rank: 2, currentTotalWaitingCount: 3 });
    expect(await admin.zrange(keys.waiting, 0, -1, 'WITHSCORES')).toEqual(['alice', '1', 'bob', '2', 'carol', '3']);
    expect(await admin.hget(keys.meta, 'seq')).toBe('3'); // one sequence number drawn, not two
    expect(await queue.enter('dave')).toMatchObject({ rank: 3, currentTotalWaitingCount: 4 });
    expect(await admin.zscore(keys.waiting, 'dave')).toBe('4');
  });

  it('admit: the re-sent call admits nothing extra, even when members joined in between', async () => {
    const { queue, direct, keys, reconnects } = queueBehindProxy({ admitRatePerSecond: 1, admitBurst: 10 });
    for (const m of ['m0', 'm1', 'm2', 'm3']) await queue.enter(m);
    const startedAt = await redisNowMs();

    const lost = await withLostReply(
      'popAndIssue',
      () => queue.admit(),
      async () => {
        // Members join after the first run popped m0..m3 and before the re-send.
        for (const m of ['n0', 'n1', 'n2', 'n3']) await direct.enter(m);
      },
    );
    expectRanTwice(lost, reconnects());

    // The first run admitted m0..m3. The re-run saw its own admit id and admitted nobody,
    // so the caller's answer (the re-run's) may be [] although four members got tokens;
    // they learn it by polling. Whatever it returns must be what Redis holds.
    const records = await tokenRecords(keys);
    expect(records.map((r) => r.memberId).sort()).toEqual(['m0', 'm1', 'm2', 'm3']);
    for (const a of lost.result) expect(records.find((r) => r.memberId === a.memberId)?.token).toBe(a.entryToken);
    expect(new Set(records.map((r) => r.token)).size).toBe(4); // one token each, none shared
    for (const m of ['m0', 'm1', 'm2', 'm3']) {
      const p = await direct.position(m);
      expect(p.status).toBe('READY');
      expect(p.entryToken).toBe(records.find((r) => r.memberId === m)!.token);
    }
    // The re-run did not take the members who joined meanwhile.
    expect(await admin.zrange(keys.waiting, 0, -1)).toEqual(['n0', 'n1', 'n2', 'n3']);
    expect(await queue.stats()).toMatchObject({ waiting: 4, active: 4 });

    // The bucket was spent once: 6 of 10 left (plus refill at 1/s), so 20 more waiting
    // members get 6 tokens plus at most what refilled.
    for (let i = 0; i < 16; i++) await direct.enter(`p${i}`);
    const next = await direct.admit();
    const elapsedSeconds = ((await redisNowMs()) - startedAt) / 1000;
    expect(next.length).toBeGreaterThanOrEqual(6);
    expect(4 + next.length).toBeLessThanOrEqual(10 + Math.floor(1 * elapsedSeconds));
    expect(next.slice(0, 4).map((a) => a.memberId)).toEqual(['n0', 'n1', 'n2', 'n3']);
  });

  it('admit: a re-send that arrives after another instance admitted still issues no token twice', async () => {
    // Several app instances run admitters; one instance's admit reply is lost, and before
    // its re-send reaches Redis another instance admits. The re-sent call must still be
    // a repeat of the first (admitting nobody), not a fresh admit that issues the same
    // token strings again to other members: two members with one token share a tokenId,
    // and the order table's UNIQUE(tokenId) would refuse the second member's order.
    const { queue, direct, keys, reconnects } = queueBehindProxy({ admitRatePerSecond: 1, admitBurst: 10 });
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
    expectRanTwice(lost, reconnects());

    const records = await tokenRecords(keys);
    const tokens = records.map((r) => r.token);
    expect(new Set(tokens).size, 'every issued token is distinct').toBe(tokens.length);
    // The lost call ran once in effect: it admitted m0..m3, nobody who joined later.
    expect(records.map((r) => r.memberId).sort()).toEqual(['m0', 'm1', 'm2', 'm3', 'n0', 'n1']);
    expect(await admin.zrange(keys.waiting, 0, -1)).toEqual(['p0', 'p1', 'p2']);
  });

  it('claim returns the same claim; the token is claimed once, never by two live claims', async () => {
    const { queue, keys, reconnects } = queueBehindProxy();
    await queue.enter('alice');
    const [admission] = await queue.admit();

    const lost = await withLostReply('claimToken', () => queue.claim('alice', admission!.entryToken));
    expectRanTwice(lost, reconnects());

    // The re-run found its own claim id on the token and answered the first run's lease.
    const claim = lost.result;
    const [record] = await tokenRecords(keys);
    expect(record).toMatchObject({ memberId: 'alice', claimId: claim.claimId, claimExp: claim.expiresAt });
    expect(await admin.zrange(keys.leases, 0, -1, 'WITHSCORES')).toEqual(['alice', String(claim.expiresAt)]);
    expect((await queue.stats()).claimed).toBe(1);
    // Nobody else can claim it while the lease lives, and the returned claim is the live one.
    const other = await queue.claim('alice', admission!.entryToken).catch((e: unknown) => e);
    expect(other).toBeInstanceOf(EntryTokenError);
    expect((other as EntryTokenError).code).toBe('IN_USE');
    expect(await queue.consume(claim)).toBe(true);
  });

  it('consume answers true and the token is gone for good', async () => {
    const { queue, keys, reconnects } = queueBehindProxy();
    await queue.enter('alice');
    const [admission] = await queue.admit();
    const claim = await queue.claim('alice', admission!.entryToken);

    const lost = await withLostReply('consume', () => queue.consume(claim));
    expectRanTwice(lost, reconnects());

    // The re-run found the claim id among the consumed ones and answered true again.
    expect(lost.result).toBe(true);
    expect(await admin.hlen(keys.tokens)).toBe(0);
    expect(await admin.zcard(keys.active)).toBe(0);
    expect(await admin.zcard(keys.leases)).toBe(0);
    expect(await admin.zrange(keys.consumed, 0, -1)).toEqual([claim.claimId]);
    expect(await queue.state('alice')).toBe('NOT_ENTERED');
    await expect(queue.claim('alice', admission!.entryToken)).rejects.toMatchObject({ code: 'INVALID' });
    expect(await queue.consume(claim)).toBe(true);
  });

  it('release gives the token back once; the member can claim it again', async () => {
    const { queue, keys, reconnects } = queueBehindProxy();
    await queue.enter('alice');
    const [admission] = await queue.admit();
    const claim = await queue.claim('alice', admission!.entryToken);

    const lost = await withLostReply('release', () => queue.release(claim));
    expectRanTwice(lost, reconnects());

    // The first run released the token. The re-run no longer finds this claim on it, so
    // the caller's answer (the re-run's) can be false although the release happened:
    // assert the state, not the boolean.
    expect(typeof lost.result).toBe('boolean');
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
    const { queue, keys, reconnects } = queueBehindProxy();
    await queue.enter('holder');
    const [admission] = await queue.admit();
    for (const m of ['alice', 'bob', 'carol']) await queue.enter(m);

    const waiting = await withLostReply('leave', () => queue.leave('bob'));
    expectRanTwice(waiting, reconnects());
    // As with release, the re-run finds nothing left to remove: assert the state.
    expect(await admin.zrange(keys.waiting, 0, -1)).toEqual(['alice', 'carol']);
    expect(await queue.position('carol')).toMatchObject({ status: 'WAITING', rank: 1, currentTotalWaitingCount: 2 });
    expect(await queue.state('bob')).toBe('NOT_ENTERED');

    const holding = await withLostReply('leave', () => queue.leave('holder'));
    expect(holding.sent).toBe(2);
    expect(holding.executions).toBe(2);
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
    clients.push(client);
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
