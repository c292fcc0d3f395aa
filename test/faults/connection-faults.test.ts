// Fault matrix F6 (connection reset) and F7 (script cache lost), plus the fault proxy's
// RST and blackhole: three app instances (one ioredis client and one WaitingQueue each)
// run concurrent enters, position polls, admits, claims and consumes for a few seconds
// while the fault repeats. Every call must either succeed or fail with
// StoreUnavailableError (never another error, never an unhandled rejection); afterwards
// no acknowledged member is lost, no token is issued or used twice, and the admissions
// stay within burst + rate × elapsed (Redis TIME).

import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore, StoreUnavailableError, WaitingQueue, type Admission, type Claim } from '../../src/index.js';
import { queueKeys } from '../../src/store/keys.js';
import { scripts } from '../../src/store/lua.generated.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { sleep, uniqueName } from '../support/unique.js';

const RATE = 40; // admissions per second
const BURST = 20;
const MEMBERS = 240; // more than BURST + RATE × the run, so the bucket is what limits admissions
const INSTANCES = 3;
const OPERATION_TIMEOUT_MS = 1000;

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

/** Scripts Redis ran to the end or with an error reply of their own: EVAL/EVALSHA calls minus failed ones (NOSCRIPT). */
async function scriptRuns(): Promise<number> {
  const info = await admin.info('commandstats');
  const stat = (command: string, field: string) => Number(new RegExp(`^cmdstat_${command}:.*\\b${field}=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  return stat('eval', 'calls') + stat('evalsha', 'calls') - stat('eval', 'failed_calls') - stat('evalsha', 'failed_calls');
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
  calls: Map<string, number>; // op -> successful calls
  consumeFalse: number;
  slowestFailureMs: number;
  reconnects: number;
  /** Script runs on Redis minus script calls made by callers: at least this many ran twice. */
  extraRuns: number;
  startedAt: number; // Redis TIME before the first admit
  endedAt: number; // Redis TIME after every load client disconnected
}

/**
 * Runs the mixed load on `url` for `faultMs` while `fault()` is repeated every
 * `everyMs` (from an admin connection or the proxy), then lets in-flight work settle.
 */
async function runLoad(url: string, fault: () => Promise<unknown>, everyMs: number, faultMs: number, clientOptions: RedisOptions = {}): Promise<LoadResult> {
  const name = uniqueName('q');
  const runsBefore = await scriptRuns();
  const r: LoadResult = {
    name,
    acked: new Set(),
    consumed: new Map(),
    callerAdmissions: [],
    errors: new Map(),
    calls: new Map(),
    consumeFalse: 0,
    slowestFailureMs: 0,
    reconnects: 0,
    extraRuns: 0,
    startedAt: await redisNowMs(),
    endedAt: 0,
  };
  const clients = Array.from({ length: INSTANCES }, () => {
    // The README's fast-failure settings; autoResendUnfulfilledCommands stays on (the default).
    const client = new Redis(url, { maxRetriesPerRequest: 1, retryStrategy: (n) => Math.min(n * 20, 200), ...clientOptions });
    client.on('error', () => undefined); // resets are the point of the test
    client.on('reconnecting', () => r.reconnects++);
    return client;
  });
  const queues = clients.map(
    (client) =>
      new WaitingQueue({
        store: new RedisStore({ client }),
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
  for (const c of clients) c.disconnect();
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

function summary(label: string, r: LoadResult, totals: { issued: number; bound: number }) {
  const calls = Object.fromEntries(r.calls);
  const errors = Object.fromEntries(r.errors);
  console.info(
    `${label}: calls ${JSON.stringify(calls)}, errors ${JSON.stringify(errors)}, reconnects ${r.reconnects}, scripts run twice >= ${r.extraRuns}, ` +
      `issued ${totals.issued} <= ${totals.bound.toFixed(1)}, consumed ${r.consumed.size}, slowest failure ${r.slowestFailureMs} ms`,
  );
}

describe('connection faults under load (F6, F7)', () => {
  it('CLIENT KILL TYPE normal every 100 ms: StoreUnavailableError or success, nothing lost or doubled', async () => {
    let killed = 0;
    const r = await runLoad(
      server.url,
      async () => {
        killed += Number(await admin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes'));
      },
      100,
      3000,
    );
    const totals = await expectInvariants(r);
    expectOnlyStoreUnavailable(r);
    expect(killed).toBeGreaterThan(10); // the fault really hit the load's connections
    expect(r.reconnects).toBeGreaterThan(10);
    expect(r.slowestFailureMs).toBeLessThan(OPERATION_TIMEOUT_MS + 1000);
    summary('CLIENT KILL', r, { ...totals });
  });

  it('SCRIPT FLUSH every 200 ms: callers see no error at all (EVAL fallback on NOSCRIPT)', async () => {
    const before = Number(/^cmdstat_evalsha:.*\bfailed_calls=(\d+)/m.exec(await admin.info('commandstats'))?.[1] ?? 0);
    const r = await runLoad(server.url, () => admin.script('FLUSH'), 200, 3000);
    const totals = await expectInvariants(r);
    expect(Object.fromEntries(r.errors)).toEqual({});
    // The flushes did bite: EVALSHA met NOSCRIPT (a failed call) and was re-sent as EVAL.
    const after = Number(/^cmdstat_evalsha:.*\bfailed_calls=(\d+)/m.exec(await admin.info('commandstats'))?.[1] ?? 0);
    expect(after - before).toBeGreaterThan(0);
    // And the cache recovers: the next calls load the scripts again.
    const probe = new Redis(server.url, { maxRetriesPerRequest: 1 });
    try {
      const queue = new WaitingQueue({ store: new RedisStore({ client: probe }), name: r.name });
      await queue.position('m0');
      await queue.enter('late');
      expect(await admin.script('EXISTS', scripts.position.sha1, scripts.enterIfAbsent.sha1)).toEqual([1, 1]);
    } finally {
      probe.disconnect();
    }
    summary(`SCRIPT FLUSH (${after - before} NOSCRIPT)`, r, totals);
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

  it('a TCP reset of every connection every 100 ms: StoreUnavailableError or success, nothing lost or doubled', async () => {
    let resets = 0;
    const r = await runLoad(proxy.url, async () => void (resets += proxy.resetAll()), 100, 3000);
    const totals = await expectInvariants(r);
    expectOnlyStoreUnavailable(r);
    expect(resets).toBeGreaterThan(10);
    expect(r.reconnects).toBeGreaterThan(10);
    expect(proxy.errors).toEqual([]);
    summary('proxy RST', r, totals);
  });

  it('a TCP reset of one connection at a time, every 30 ms: the other instances keep admitting meanwhile', async () => {
    // While one instance reconnects to re-send a call whose reply was lost, the others go on
    // (admitting too): a re-sent admit must still be a repeat, not a second issue of its tokens.
    let resets = 0;
    const r = await runLoad(proxy.url, async () => void (proxy.resetOne(resets++) || resets--), 30, 3000);
    const totals = await expectInvariants(r);
    expectOnlyStoreUnavailable(r);
    expect(resets).toBeGreaterThan(30);
    expect(proxy.errors).toEqual([]);
    summary('proxy RST one at a time', r, totals);
  });

  it('a 1.5 s blackhole: calls fail within operationTimeoutMs, then everything recovers', async () => {
    // One long blackhole in the middle of the run, started by the first "fault" call.
    let started = false;
    const r = await runLoad(
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
    summary('proxy blackhole', r, totals);
  });
});
