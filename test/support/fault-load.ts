// The mixed load of the connection and link fault tests (test/faults/connection-faults.test.ts,
// test/faults/link-faults.test.ts): three app instances (one client and one WaitingQueue each)
// run concurrent enters, position polls, admits, claims and consumes for a few seconds while a
// fault repeats; then the invariants are read from Redis itself.

import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { RedisStore, StoreUnavailableError, WaitingQueue, type Admission, type Claim } from '../../src/index.js';
import { queueKeys } from '../../src/store/keys.js';
import { connectClient, scriptStats, type ClientSetup, type TestClient } from './redis-clients.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { sleep, uniqueName } from './unique.js';

/** A fault file's own redis-server and its admin connection, set once its `beforeAll` ran. */
export interface FaultServer {
  server: RedisServer;
  /** Straight to Redis, never faulted: CLIENT KILL skips the caller, and it does not go through a proxy. */
  admin: Redis;
}

/**
 * Starts the file's redis-server and admin connection before its tests and stops them after;
 * every test must leave no unhandled rejection behind (a fault must never cause one).
 */
export function useFaultServer(): FaultServer {
  const fault = {} as FaultServer;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);
  beforeAll(async () => {
    fault.server = await startRedisServer();
    fault.admin = new Redis(fault.server.url, { maxRetriesPerRequest: 1 });
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(() => {
    expect(unhandled, 'unhandled rejections').toEqual([]);
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    fault.admin?.disconnect();
    await fault.server?.stop();
  });
  return fault;
}

export const RATE = 40; // admissions per second
export const BURST = 20;
export const MEMBERS = 240; // more than BURST + RATE × the run, so the bucket is what limits admissions
export const INSTANCES = 3;
export const OPERATION_TIMEOUT_MS = 1000;

/** The clients the load runs on: ioredis with the README's settings, node-redis with its offline queue on (its default) and off. */
export const IOREDIS: ClientSetup = { kind: 'ioredis', label: 'ioredis' };
export const NODE_REDIS: ClientSetup = { kind: 'node-redis', label: 'node-redis' };
export const NODE_REDIS_NO_OFFLINE_QUEUE: ClientSetup = { kind: 'node-redis', label: 'node-redis with disableOfflineQueue', options: { offlineQueue: false } };
/** Where the offline queue matters: resets of every connection, which leave clients disconnected for a moment. */
export const ALL_SETUPS = [IOREDIS, NODE_REDIS, NODE_REDIS_NO_OFFLINE_QUEUE];
/** Where it matters less: no connection drops (SCRIPT FLUSH), none is noticed (a blackhole), or one at a time. */
export const DEFAULT_SETUPS = [IOREDIS, NODE_REDIS];

/** Scripts Redis ran to the end: EVAL/EVALSHA calls (with their _RO forms, node-redis' read-only scripts) minus failed ones (NOSCRIPT, a late enter's refusal). */
export async function scriptRuns(admin: Redis): Promise<number> {
  const { scriptCalls, failedCalls } = scriptStats(await admin.info('commandstats'));
  return scriptCalls - failedCalls;
}

async function redisNowMs(admin: Redis): Promise<number> {
  const [s, us] = await admin.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

/** What the load saw, for the assertions and the report. */
export interface LoadResult {
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
 * Runs the mixed load on `url` (`admin`: a connection straight to the server, never faulted) through clients of `setup` for `faultMs` while `fault()`
 * is repeated every `everyMs` (from an admin connection or the proxy), then lets
 * in-flight work settle.
 */
export async function runLoad(
  admin: Redis,
  setup: ClientSetup,
  url: string,
  fault: () => Promise<unknown>,
  everyMs: number,
  faultMs: number,
): Promise<LoadResult> {
  const name = uniqueName('q');
  const runsBefore = await scriptRuns(admin);
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
    startedAt: await redisNowMs(admin),
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
  r.endedAt = await redisNowMs(admin);
  const callerCalls = [...r.calls.values(), ...r.errors.values()].reduce((a, b) => a + b, 0); // one script each
  r.extraRuns = (await scriptRuns(admin)) - runsBefore - callerCalls;
  return r;
}

/** The invariants, from Redis itself, after the load. */
export async function expectInvariants(admin: Redis, r: LoadResult): Promise<{ issued: number; bound: number }> {
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
export function expectOnlyStoreUnavailable(r: LoadResult): number {
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
export function expectResetBehaviour(setup: ClientSetup, r: LoadResult) {
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

export function summary(label: string, r: LoadResult, totals: { issued: number; bound: number }) {
  const calls = Object.fromEntries(r.calls);
  const errors = Object.fromEntries(r.errors);
  const causes = Object.fromEntries(r.causes);
  console.info(
    `${label}: calls ${JSON.stringify(calls)}, errors ${JSON.stringify(errors)}, causes ${JSON.stringify(causes)}, reconnects ${r.reconnects}, script runs - caller calls ${r.extraRuns} (touches and second admit steps included), ` +
      `issued ${totals.issued} <= ${totals.bound.toFixed(1)}, consumed ${r.consumed.size}, slowest failure ${r.slowestFailureMs} ms`,
  );
}
