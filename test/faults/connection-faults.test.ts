// Fault matrix F6 (connection reset) and F7 (script cache lost), plus the fault proxy's
// RST and blackhole, on both client libraries: three app instances (one client and one
// WaitingQueue each) run concurrent enters, position polls, admits, claims and consumes
// for a few seconds while the fault repeats. Every call must either succeed or fail with
// StoreUnavailableError (never another error, never an unhandled rejection); afterwards
// no acknowledged member is lost, no token is issued or used twice, and the admissions
// stay within burst + rate × elapsed (Redis TIME).
//
// The clients differ in what a reset does to the calls in flight (test/support/redis-clients.ts):
// ioredis re-sends them after reconnecting (a script may run twice; the caller sees no
// error), node-redis rejects them (the caller sees StoreUnavailableError and retries).
// Calls made while disconnected wait in the offline queue, or fail at once without it
// (node-redis `disableOfflineQueue`, ioredis `enableOfflineQueue: false`); a queued call
// sent after the caller gave up is late, and a late enter writes nothing (its deadline,
// checked in Redis time): the last two describes show it on each client.

import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore, StoreUnavailableError, WaitingQueue, type Admission, type Claim } from '../../src/index.js';
import { queueKeys } from '../../src/store/keys.js';
import { scripts } from '../../src/store/lua.generated.js';
import { FaultProxy, isScript } from '../support/fault-proxy.js';
import { startFaultRedis } from '../support/fault-redis.js';
import { connectClient, errorStat, scriptStats, type ClientSetup, type TestClient } from '../support/redis-clients.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { sleep, uniqueName } from '../support/unique.js';

const RATE = 40; // admissions per second
const BURST = 20;
const MEMBERS = 240; // more than BURST + RATE × the run, so the bucket is what limits admissions
const INSTANCES = 3;
const OPERATION_TIMEOUT_MS = 1000;

/** The clients the load runs on: ioredis with the README's settings, node-redis with its offline queue on (its default) and off. */
const IOREDIS: ClientSetup = { kind: 'ioredis', label: 'ioredis' };
const NODE_REDIS: ClientSetup = { kind: 'node-redis', label: 'node-redis' };
const NODE_REDIS_NO_OFFLINE_QUEUE: ClientSetup = { kind: 'node-redis', label: 'node-redis with disableOfflineQueue', options: { offlineQueue: false } };
/** Where the offline queue matters: resets of every connection, which leave clients disconnected for a moment. */
const ALL_SETUPS = [IOREDIS, NODE_REDIS, NODE_REDIS_NO_OFFLINE_QUEUE];
/** Where it matters less: no connection drops (SCRIPT FLUSH), none is noticed (a blackhole), or one at a time. */
const DEFAULT_SETUPS = [IOREDIS, NODE_REDIS];

let server: RedisServer;
let admin: Redis; // straight to Redis, never killed (CLIENT KILL skips the caller)
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);

beforeAll(async () => {
  server = await startRedisServer();
  admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  expect(unhandled, 'unhandled rejections').toEqual([]);
});
afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  admin?.disconnect();
  await server?.stop();
});

/** Scripts Redis ran to the end: EVAL/EVALSHA calls (with their _RO forms, node-redis' read-only scripts) minus failed ones (NOSCRIPT, a late enter's refusal). */
async function scriptRuns(): Promise<number> {
  const { scriptCalls, failedCalls } = scriptStats(await admin.info('commandstats'));
  return scriptCalls - failedCalls;
}

/** EVALSHA calls that met NOSCRIPT (and EVALSHA_RO, for node-redis). */
async function noScriptCalls(): Promise<number> {
  const info = await admin.info('commandstats');
  const failed = (command: string) => Number(new RegExp(`^cmdstat_${command}:.*\\bfailed_calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  return failed('evalsha') + failed('evalsha_ro');
}

async function redisNowMs(): Promise<number> {
  const [s, us] = await admin.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

/** What the load saw, for the assertions and the report. */
interface LoadResult {
  name: string;
  acked: Set<string>; // members whose enter was acknowledged
  consumed: Map<string, Claim>; // member -> the claim whose consume answered true
  callerAdmissions: Admission[];
  errors: Map<string, number>; // "op ErrorClass code" -> count
  causes: Map<string, number>; // the client library's error behind a StoreUnavailableError -> count
  calls: Map<string, number>; // op -> successful calls
  consumeFalse: number;
  slowestFailureMs: number;
  reconnects: number;
  /** Script runs on Redis minus script calls made by callers: up with ioredis' re-sends and background work (touches, second admit steps), down with calls that never reached Redis. */
  extraRuns: number;
  startedAt: number; // Redis TIME before the first admit
  endedAt: number; // Redis TIME after every load client disconnected
}

/**
 * Runs the mixed load on `url` through clients of `setup` for `faultMs` while `fault()`
 * is repeated every `everyMs` (from an admin connection or the proxy), then lets
 * in-flight work settle.
 */
async function runLoad(setup: ClientSetup, url: string, fault: () => Promise<unknown>, everyMs: number, faultMs: number): Promise<LoadResult> {
  const name = uniqueName('q');
  const runsBefore = await scriptRuns();
  const r: LoadResult = {
    name,
    acked: new Set(),
    consumed: new Map(),
    callerAdmissions: [],
    errors: new Map(),
    causes: new Map(),
    calls: new Map(),
    consumeFalse: 0,
    slowestFailureMs: 0,
    reconnects: 0,
    extraRuns: 0,
    startedAt: await redisNowMs(),
    endedAt: 0,
  };
  // ioredis: the README's fast-failure settings; autoResendUnfulfilledCommands stays on (the default).
  // Every client has an error listener (connectClient): resets are the point of the test.
  const clients: TestClient[] = await Promise.all(
    Array.from({ length: INSTANCES }, () =>
      connectClient(setup.kind, url, { reconnectDelay: (n) => Math.min(n * 20, 200), ioredis: { maxRetriesPerRequest: 1 }, ...setup.options }),
    ),
  );
  const queues = clients.map(
    (client) =>
      new WaitingQueue({
        store: new RedisStore({ client: client.client }),
        name,
        admitRatePerSecond: RATE,
        admitBurst: BURST,
        operationTimeoutMs: OPERATION_TIMEOUT_MS,
      }),
  );
  let stopped = false;

  /** One call: counted when it succeeds; any error is recorded by class and code, never thrown. */
  async function call<T>(op: string, run: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false }> {
    const started = Date.now();
    try {
      const value = await run();
      r.calls.set(op, (r.calls.get(op) ?? 0) + 1);
      return { ok: true, value };
    } catch (error) {
      const e = error as Error & { code?: string };
      const key = `${op} ${e?.constructor?.name ?? typeof error} ${e?.code ?? ''}`.trim();
      r.errors.set(key, (r.errors.get(key) ?? 0) + 1);
      const cause = e?.cause instanceof Error ? e.cause.message : 'timeout';
      r.causes.set(cause, (r.causes.get(cause) ?? 0) + 1);
      r.slowestFailureMs = Math.max(r.slowestFailureMs, Date.now() - started);
      return { ok: false };
    }
  }

  async function member(queue: WaitingQueue, id: string): Promise<void> {
    while (!stopped && !r.acked.has(id)) {
      if ((await call('enter', () => queue.enter(id))).ok) r.acked.add(id);
      else await sleep(20);
    }
    let token: string | null = null;
    while (!stopped && token === null) {
      const p = await call('position', () => queue.position(id));
      if (p.ok && p.value.status === 'READY') token = p.value.entryToken;
      else await sleep(100);
    }
    if (token === null) return;
    // One claim: a retry would carry a new claim id and meet the first one's lease (IN_USE).
    const claimed = await call('claim', () => queue.claim(id, token));
    if (!claimed.ok) return; // abandoned: the member stays READY (or CLAIMED until the lease ends)
    // The order "committed": consume until Redis answers; a repeat is idempotent.
    for (let attempt = 0; attempt < 50; attempt++) {
      const consumed = await call('consume', () => queue.consume(claimed.value));
      if (consumed.ok) {
        if (consumed.value) r.consumed.set(id, claimed.value);
        else r.consumeFalse++;
        return;
      }
      await sleep(50);
    }
  }

  async function admitter(queue: WaitingQueue): Promise<void> {
    while (!stopped) {
      const admitted = await call('admit', () => queue.admit());
      if (admitted.ok) r.callerAdmissions.push(...admitted.value);
      await sleep(50);
    }
  }

  const work = [...queues.map((q) => admitter(q)), ...Array.from({ length: MEMBERS }, (_, i) => member(queues[i % INSTANCES]!, `m${i}`))];

  const faultUntil = Date.now() + faultMs;
  let faults = 0;
  while (Date.now() < faultUntil) {
    await fault();
    faults++;
    await sleep(everyMs);
  }
  expect(faults).toBeGreaterThan(5);
  await sleep(1000); // the fault is gone: let in-flight flows settle
  stopped = true;
  await Promise.all(work);
  r.reconnects = clients.reduce((sum, c) => sum + c.reconnects, 0);
  for (const c of clients) c.close();
  await sleep(100); // whatever was already written to Redis has run by now
  r.endedAt = await redisNowMs();
  const callerCalls = [...r.calls.values(), ...r.errors.values()].reduce((a, b) => a + b, 0); // one script each
  r.extraRuns = (await scriptRuns()) - runsBefore - callerCalls;
  return r;
}

/** The invariants, from Redis itself, after the load. */
async function expectInvariants(r: LoadResult): Promise<{ issued: number; bound: number }> {
  const keys = queueKeys('waitgate', r.name);
  const inspect = new WaitingQueue({ store: new RedisStore({ client: admin }), name: r.name });
  const waiting = new Set(await admin.zrange(keys.waiting, 0, -1));
  const records = new Map(Object.entries(await admin.hgetall(keys.tokens)).map(([m, raw]) => [m, raw.split('|')[3]!]));
  const active = await admin.zrange(keys.active, 0, -1);
  const leases = await admin.zrange(keys.leases, 0, -1);
  const consumedClaims = await admin.zcard(keys.consumed);

  // I1: every acknowledged member is waiting, holds a token, or consumed, and only one of these.
  for (const id of r.acked) {
    const status = await inspect.state(id);
    if (r.consumed.has(id)) expect(status, `${id} consumed, then back in the queue`).toBe('NOT_ENTERED');
    else expect(['WAITING', 'READY'], `${id} lost`).toContain(status);
    expect(waiting.has(id) && records.has(id), `${id} both waiting and holding a token`).toBe(false);
  }
  // Every member eventually got an acknowledged enter (retrying after StoreUnavailableError works).
  expect(r.acked.size).toBe(MEMBERS);
  // The indexes agree: one token record per active member, leases only on tokens.
  expect([...active].sort()).toEqual([...records.keys()].sort());
  for (const m of leases) expect(records.has(m)).toBe(true);

  // I2/I5: no member admitted twice, no token issued twice, one order per token and per member
  // (the order table's UNIQUE(tokenId), faked here over live tokens and consumed claims).
  const admittedIds = r.callerAdmissions.map((a) => a.memberId);
  expect(new Set(admittedIds).size, 'a member admitted twice').toBe(admittedIds.length);
  const orderTokenIds = [...r.consumed.values()].map((c) => c.tokenId);
  expect(new Set(orderTokenIds).size, 'two orders on one tokenId').toBe(orderTokenIds.length);
  const liveTokens = [...records.values()];
  expect(new Set(liveTokens).size, 'one token held by two members').toBe(liveTokens.length);
  for (const a of r.callerAdmissions) {
    if (records.has(a.memberId)) expect(records.get(a.memberId)).toBe(a.entryToken);
  }
  expect(consumedClaims).toBe(r.consumed.size); // one consumed claim per member that ordered
  expect(r.consumeFalse).toBe(0); // a committed order's consume, retried, always answers true

  // I3: issued ≤ B + R·T over the whole run, on Redis TIME. Nothing expires (TTL 300 s) and
  // nobody leaves, so every token ever issued is either live or consumed.
  const issued = records.size + consumedClaims;
  const bound = BURST + RATE * ((r.endedAt - r.startedAt) / 1000);
  expect(issued).toBeLessThanOrEqual(bound);
  expect(issued).toBeGreaterThanOrEqual(BURST); // the load did get members in
  expect(issued).toBeGreaterThanOrEqual(new Set(admittedIds).size);
  expect(r.consumed.size).toBeGreaterThan(0);
  return { issued, bound };
}

/** Only StoreUnavailableError (code STORE_UNAVAILABLE: not a lost queue state), by operation. */
function expectOnlyStoreUnavailable(r: LoadResult): number {
  let total = 0;
  for (const [key, count] of r.errors) {
    expect(key).toMatch(new RegExp(`^\\w+ ${StoreUnavailableError.name} STORE_UNAVAILABLE$`));
    total += count;
  }
  return total;
}

/**
 * What a reset did to the calls in flight, by client: ioredis re-sent them; node-redis
 * rejected them ("Socket closed unexpectedly" or the socket's error), and without its
 * offline queue also failed the calls made while reconnecting ("The client is offline").
 */
function expectResetBehaviour(setup: ClientSetup, r: LoadResult) {
  const causes = [...r.causes.keys()];
  if (setup.kind === 'node-redis') {
    expect(
      causes.some((c) => /Socket closed unexpectedly|ECONNRESET/.test(c)),
      `in-flight calls rejected: ${causes.join(', ')}`,
    ).toBe(true);
    expect(causes.some((c) => c === 'The client is offline')).toBe(setup.options?.offlineQueue === false);
  } else {
    expect(causes.filter((c) => /Socket closed unexpectedly|client is offline/.test(c))).toEqual([]);
  }
}

function summary(label: string, r: LoadResult, totals: { issued: number; bound: number }) {
  const calls = Object.fromEntries(r.calls);
  const errors = Object.fromEntries(r.errors);
  const causes = Object.fromEntries(r.causes);
  console.info(
    `${label}: calls ${JSON.stringify(calls)}, errors ${JSON.stringify(errors)}, causes ${JSON.stringify(causes)}, reconnects ${r.reconnects}, script runs - caller calls ${r.extraRuns} (touches and second admit steps included), ` +
      `issued ${totals.issued} <= ${totals.bound.toFixed(1)}, consumed ${r.consumed.size}, slowest failure ${r.slowestFailureMs} ms`,
  );
}

describe.each(ALL_SETUPS)('connection faults under load on $label (F6)', (setup) => {
  it('CLIENT KILL TYPE normal every 100 ms: StoreUnavailableError or success, nothing lost or doubled', async () => {
    let killed = 0;
    const r = await runLoad(
      setup,
      server.url,
      async () => {
        killed += Number(await admin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes'));
      },
      100,
      3000,
    );
    const totals = await expectInvariants(r);
    expectOnlyStoreUnavailable(r);
    expectResetBehaviour(setup, r);
    expect(killed).toBeGreaterThan(10); // the fault really hit the load's connections
    expect(r.reconnects).toBeGreaterThan(10);
    expect(r.slowestFailureMs).toBeLessThan(OPERATION_TIMEOUT_MS + 1000);
    summary(`CLIENT KILL, ${setup.label}`, r, { ...totals });
  });
});

describe.each(DEFAULT_SETUPS)('script cache lost under load on $label (F7)', (setup) => {
  it('SCRIPT FLUSH every 200 ms: callers see no error at all (EVAL fallback on NOSCRIPT)', async () => {
    const before = await noScriptCalls();
    const r = await runLoad(setup, server.url, () => admin.script('FLUSH'), 200, 3000);
    const totals = await expectInvariants(r);
    expect(Object.fromEntries(r.errors)).toEqual({});
    // The flushes did bite: EVALSHA met NOSCRIPT (a failed call) and was re-sent as EVAL.
    const after = await noScriptCalls();
    expect(after - before).toBeGreaterThan(0);
    // And the cache recovers: the next calls load the scripts again.
    const probe = await connectClient(setup.kind, server.url, setup.options);
    try {
      const queue = new WaitingQueue({ store: new RedisStore({ client: probe.client }), name: r.name });
      await queue.position('m0');
      await queue.enter('late');
      expect(await admin.script('EXISTS', scripts.position.sha1, scripts.enterIfAbsent.sha1)).toEqual([1, 1]);
    } finally {
      probe.close();
    }
    summary(`SCRIPT FLUSH (${after - before} NOSCRIPT), ${setup.label}`, r, totals);
  });
});

describe('link faults through the fault proxy', () => {
  let proxy: FaultProxy;
  beforeAll(async () => {
    proxy = await FaultProxy.start({ port: server.port });
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it.each(ALL_SETUPS)('a TCP reset of every connection every 100 ms on $label: StoreUnavailableError or success, nothing lost or doubled', async (setup) => {
    let resets = 0;
    const r = await runLoad(setup, proxy.url, async () => void (resets += proxy.resetAll()), 100, 3000);
    const totals = await expectInvariants(r);
    expectOnlyStoreUnavailable(r);
    expectResetBehaviour(setup, r);
    expect(resets).toBeGreaterThan(10);
    expect(r.reconnects).toBeGreaterThan(10);
    expect(proxy.errors).toEqual([]);
    summary(`proxy RST, ${setup.label}`, r, totals);
  });

  it.each(DEFAULT_SETUPS)('a TCP reset of one connection at a time, every 30 ms, on $label: the other instances keep admitting meanwhile', async (setup) => {
    // While one instance reconnects to re-send a call whose reply was lost (ioredis), or its
    // caller retries (node-redis), the others go on (admitting too): a re-sent admit must
    // still be a repeat, not a second issue of its tokens.
    let resets = 0;
    const r = await runLoad(setup, proxy.url, async () => void (proxy.resetOne(resets++) || resets--), 30, 3000);
    const totals = await expectInvariants(r);
    expectOnlyStoreUnavailable(r);
    expect(resets).toBeGreaterThan(30);
    expect(proxy.errors).toEqual([]);
    summary(`proxy RST one at a time, ${setup.label}`, r, totals);
  });

  it.each(DEFAULT_SETUPS)('a 1.5 s blackhole on $label: calls fail within operationTimeoutMs, then everything recovers', async (setup) => {
    // One long blackhole in the middle of the run, started by the first "fault" call.
    let started = false;
    const r = await runLoad(
      setup,
      proxy.url,
      async () => {
        if (!started) {
          started = true;
          await sleep(500);
          void proxy.blackhole(1500);
        }
      },
      100,
      3000,
    );
    const totals = await expectInvariants(r);
    const failures = expectOnlyStoreUnavailable(r);
    expect(failures).toBeGreaterThan(0); // calls in the blackhole timed out...
    expect(r.slowestFailureMs).toBeLessThan(OPERATION_TIMEOUT_MS + 500); // ...within the bound, never hanging
    expect(proxy.errors).toEqual([]);
    summary(`proxy blackhole, ${setup.label}`, r, totals);
  });
});

/** The four ways a client can treat a call made while it is disconnected. */
const OFFLINE_SETUPS: ClientSetup[] = [
  { kind: 'ioredis', label: 'ioredis, offline queue on', options: { offlineQueue: true } },
  { kind: 'ioredis', label: 'ioredis, enableOfflineQueue false', options: { offlineQueue: false } },
  { kind: 'node-redis', label: 'node-redis, offline queue on', options: { offlineQueue: true } },
  { kind: 'node-redis', label: 'node-redis, disableOfflineQueue', options: { offlineQueue: false } },
];

const SHORT_TIMEOUT_MS = 300;

async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/**
 * Scripts that failed with an error reply of their own: failed EVAL/EVALSHA calls
 * minus those that met NOSCRIPT. Here, only a late enter's refusal does ("enter arrived
 * after its deadline; nothing written"). (Not errorstat_ERR: node-redis' CLIENT SETINFO
 * handshake adds to it on Redis 7.0.)
 */
async function lateEntersRefused(redis: Redis): Promise<number> {
  return scriptStats(await redis.info('commandstats')).failedCalls - errorStat(await redis.info('errorstats'), 'NOSCRIPT');
}

/** True when the queue's store answers a poll (again). */
async function answers(queue: WaitingQueue, memberId: string): Promise<boolean> {
  try {
    await queue.position(memberId);
    return true;
  } catch {
    return false;
  }
}

/** A call's outcome, the client library's error behind it ('timeout' for none: operationTimeoutMs), and how long the caller waited. */
async function timed<T>(run: () => Promise<T>): Promise<{ error: unknown; cause: string; ms: number }> {
  const started = Date.now();
  const error = await run().then(
    () => null,
    (e: unknown) => e,
  );
  const cause = (error as { cause?: unknown } | null)?.cause;
  return { error, cause: cause instanceof Error ? cause.message : 'timeout', ms: Date.now() - started };
}

describe.each(OFFLINE_SETUPS)('a call made while disconnected, on $label', (setup) => {
  const queued = setup.options!.offlineQueue!;
  /** Why a call made while disconnected failed, when the client does not keep it. */
  const refusedOffline = setup.kind === 'ioredis' ? /enableOfflineQueue options is false/ : /^The client is offline$/;

  it('a reconnection held up by a blackhole: the call fails within operationTimeoutMs; queued, it is sent late and a late enter writes nothing', async () => {
    const proxy = await FaultProxy.start({ port: server.port });
    const client = await connectClient(setup.kind, proxy.url, { ...setup.options, ioredis: { maxRetriesPerRequest: 1 } });
    try {
      const name = uniqueName('q');
      const keys = queueKeys('waitgate', name);
      const queue = new WaitingQueue({ store: new RedisStore({ client: client.client }), name, operationTimeoutMs: SHORT_TIMEOUT_MS });
      await queue.enter('alice'); // the reply teaches the store Redis's clock: later enters carry a deadline

      // The link drops; the client reconnects at once, but the proxy forwards nothing until
      // the blackhole ends: connected, not ready (its handshake is held), so calls wait offline.
      proxy.startBlackhole();
      proxy.resetAll();
      await waitFor(() => client.reconnects >= 1 && proxy.connections >= 1, 'the reconnection');
      const before = scriptStats(await admin.info('commandstats'));
      const refusedBefore = await lateEntersRefused(admin);
      const sent = proxy.count(isScript(scripts.enterIfAbsent));

      const late = await timed(() => queue.enter('late'));
      expect(late.error).toBeInstanceOf(StoreUnavailableError);
      // It waited in the offline queue until operationTimeoutMs, or failed at once.
      expect(late.cause).toMatch(queued ? /^timeout$/ : refusedOffline);
      if (queued) expect(late.ms).toBeGreaterThanOrEqual(SHORT_TIMEOUT_MS - 5);
      else expect(late.ms).toBeLessThan(100);
      expect(late.ms).toBeLessThan(SHORT_TIMEOUT_MS + 200);
      await sleep(200); // well past the deadline
      proxy.endBlackhole();
      // The client gets ready; a queued enter goes out now, after its caller gave up.
      await waitFor(() => answers(queue, 'alice'), 'the client to recover');
      await sleep(50);

      const after = scriptStats(await admin.info('commandstats'));
      const refused = (await lateEntersRefused(admin)) - refusedBefore;
      sent.stop();
      // Server-side: the queued enter reached Redis once and was refused (an error reply of
      // the script: a failed call); without the offline queue it never reached Redis.
      expect(sent.count).toBe(queued ? 1 : 0);
      expect(refused).toBe(queued ? 1 : 0);
      expect(after.failedCalls - before.failedCalls).toBe(queued ? 1 : 0);
      // Either way nothing was written: no member, no sequence number drawn.
      expect(await admin.zrange(keys.waiting, 0, -1)).toEqual(['alice']);
      expect(await admin.hget(keys.meta, 'seq')).toBe('1');
      // The member's retry joins once, behind alice.
      expect(await queue.enter('late')).toMatchObject({ status: 'WAITING', rank: 1 });
      expect(await admin.hget(keys.meta, 'seq')).toBe('2');
    } finally {
      client.close();
      await proxy.close();
    }
  });

  it('Redis gone (kill -9, reconnections refused) and back: calls fail within operationTimeoutMs; a late enter writes nothing', async () => {
    // AOF with fsync always: the queue survives the kill, so the restarted server still knows it.
    const redis = await startFaultRedis(['--appendonly', 'yes', '--appendfsync', 'always']);
    // Attempts every 50 ms, but none while the server restarts: one that lands while it loads
    // its AOF meets LOADING, and node-redis would send its queue into that (seen with files in parallel).
    let restarting = false;
    const reconnectDelay = () => (restarting ? 2000 : 50);
    const client = await connectClient(setup.kind, redis.url, { ...setup.options, reconnectDelay, ioredis: { maxRetriesPerRequest: 1 } });
    try {
      const name = uniqueName('q');
      const queue = new WaitingQueue({ store: new RedisStore({ client: client.client }), name, operationTimeoutMs: SHORT_TIMEOUT_MS });
      await queue.enter('alice');
      await redis.kill9();
      await waitFor(() => client.errors.some((e) => /ECONNREFUSED/.test(e)), 'a refused reconnection');

      // Queued, node-redis keeps the call until the caller gives up (operationTimeoutMs);
      // ioredis fails it after maxRetriesPerRequest refused attempts. Unqueued, it fails at once.
      const queuedCause = setup.kind === 'ioredis' ? /max retries per request/i : /^timeout$/;
      for (const call of [() => queue.enter('late'), () => queue.position('alice'), () => queue.admit()] as Array<() => Promise<unknown>>) {
        const { error, cause, ms } = await timed(call);
        expect(error).toBeInstanceOf(StoreUnavailableError);
        expect(cause).toMatch(queued ? queuedCause : refusedOffline);
        expect(ms).toBeLessThan(SHORT_TIMEOUT_MS + 200);
        if (!queued) expect(ms).toBeLessThan(100);
      }
      restarting = true;
      await sleep(200); // the attempt already planned (50 ms) is refused; the next one waits 2 s
      await redis.restart(); // answers PING: loaded
      restarting = false;
      await waitFor(() => answers(queue, 'alice'), 'the client to recover');
      await sleep(100);

      // The restarted server's counters start at zero, so they show exactly what reached it
      // after the restart. node-redis keeps its offline queue through every refused attempt:
      // the queued enter arrived late and was refused. ioredis (maxRetriesPerRequest 1) had
      // already failed its queued calls after a refused attempt: nothing late arrived.
      const sentLate = setup.kind === 'node-redis' && queued;
      const direct = new Redis(redis.url, { maxRetriesPerRequest: 1 });
      try {
        expect(await lateEntersRefused(direct)).toBe(sentLate ? 1 : 0);
        const keys = queueKeys('waitgate', name);
        expect(await direct.zrange(keys.waiting, 0, -1)).toEqual(sentLate ? [] : ['alice']);
        expect(await direct.hget(keys.meta, 'seq')).toBe('1'); // the late enter drew no sequence number
        // The late admit, though, is an admit like any other (a fresh admit id, within the
        // bucket): it gave alice her token, which she finds by polling.
        expect(await direct.hlen(keys.tokens)).toBe(sentLate ? 1 : 0);
        expect(await queue.state('alice')).toBe(sentLate ? 'READY' : 'WAITING');
      } finally {
        direct.disconnect();
      }
      // The member's retry joins once.
      expect(await queue.enter('late')).toMatchObject({ status: 'WAITING', rank: sentLate ? 0 : 1 });
    } finally {
      client.close();
      await redis.stop();
    }
  });
});
