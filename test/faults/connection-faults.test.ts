// Fault matrix F6 (connection reset) and F7 (script cache lost) on both client libraries,
// under the mixed load of test/support/fault-load.ts: three app instances run concurrent
// enters, position polls, admits, claims and consumes for a few seconds while the fault
// repeats. Every call must either succeed or fail with StoreUnavailableError (never another
// error, never an unhandled rejection); afterwards no acknowledged member is lost, no token
// is issued or used twice, and the admissions stay within burst + rate × elapsed (Redis TIME).
// The fault proxy's RST and blackhole under the same load: test/faults/link-faults.test.ts.
//
// The clients differ in what a reset does to the calls in flight (test/support/redis-clients.ts):
// ioredis re-sends them after reconnecting (a script may run twice; the caller sees no
// error), node-redis rejects them (the caller sees StoreUnavailableError and retries).
// Calls made while disconnected wait in the offline queue, or fail at once without it
// (node-redis `disableOfflineQueue`, ioredis `enableOfflineQueue: false`); a queued call
// sent after the caller gave up is late, and a late enter writes nothing (its deadline,
// checked in Redis time): the last two describes show it on each client.

import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RedisStore, StoreUnavailableError, WaitingQueue } from '../../src/index.js';
import { queueKeys } from '../../src/store/keys.js';
import { scripts } from '../../src/store/lua.generated.js';
import { FaultProxy, isScript } from '../support/fault-proxy.js';
import { startFaultRedis } from '../support/fault-redis.js';
import {
  ALL_SETUPS,
  DEFAULT_SETUPS,
  OPERATION_TIMEOUT_MS,
  expectInvariants,
  expectOnlyStoreUnavailable,
  expectResetBehaviour,
  runLoad,
  summary,
  useFaultServer,
} from '../support/fault-load.js';
import { connectClient, errorStat, scriptStats, type ClientSetup } from '../support/redis-clients.js';
import { sleep, uniqueName } from '../support/unique.js';

const fault = useFaultServer();

/** EVALSHA calls that met NOSCRIPT (and EVALSHA_RO, for node-redis). */
async function noScriptCalls(): Promise<number> {
  const info = await fault.admin.info('commandstats');
  const failed = (command: string) => Number(new RegExp(`^cmdstat_${command}:.*\\bfailed_calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  return failed('evalsha') + failed('evalsha_ro');
}

describe.each(ALL_SETUPS)('connection faults under load on $label (F6)', (setup) => {
  it('CLIENT KILL TYPE normal every 100 ms: StoreUnavailableError or success, nothing lost or doubled', async () => {
    let killed = 0;
    const r = await runLoad(
      fault.admin,
      setup,
      fault.server.url,
      async () => {
        killed += Number(await fault.admin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes'));
      },
      100,
      3000,
    );
    const totals = await expectInvariants(fault.admin, r);
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
    const r = await runLoad(fault.admin, setup, fault.server.url, () => fault.admin.script('FLUSH'), 200, 3000);
    const totals = await expectInvariants(fault.admin, r);
    expect(Object.fromEntries(r.errors)).toEqual({});
    // The flushes did bite: EVALSHA met NOSCRIPT (a failed call) and was re-sent as EVAL.
    const after = await noScriptCalls();
    expect(after - before).toBeGreaterThan(0);
    // And the cache recovers: the next calls load the scripts again.
    const probe = await connectClient(setup.kind, fault.server.url, setup.options);
    try {
      const queue = new WaitingQueue({ store: new RedisStore({ client: probe.client }), name: r.name });
      await queue.position('m0');
      await queue.enter('late');
      expect(await fault.admin.script('EXISTS', scripts.position.sha1, scripts.enterIfAbsent.sha1)).toEqual([1, 1]);
    } finally {
      probe.close();
    }
    summary(`SCRIPT FLUSH (${after - before} NOSCRIPT), ${setup.label}`, r, totals);
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
    const proxy = await FaultProxy.start({ port: fault.server.port });
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
      const before = scriptStats(await fault.admin.info('commandstats'));
      const refusedBefore = await lateEntersRefused(fault.admin);
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

      const after = scriptStats(await fault.admin.info('commandstats'));
      const refused = (await lateEntersRefused(fault.admin)) - refusedBefore;
      sent.stop();
      // Server-side: the queued enter reached Redis once and was refused (an error reply of
      // the script: a failed call); without the offline queue it never reached Redis.
      expect(sent.count).toBe(queued ? 1 : 0);
      expect(refused).toBe(queued ? 1 : 0);
      expect(after.failedCalls - before.failedCalls).toBe(queued ? 1 : 0);
      // Either way nothing was written: no member, no sequence number drawn.
      expect(await fault.admin.zrange(keys.waiting, 0, -1)).toEqual(['alice']);
      expect(await fault.admin.hget(keys.meta, 'seq')).toBe('1');
      // The member's retry joins once, behind alice.
      expect(await queue.enter('late')).toMatchObject({ status: 'WAITING', rank: 1 });
      expect(await fault.admin.hget(keys.meta, 'seq')).toBe('2');
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
