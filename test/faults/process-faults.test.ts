// Faults of the Redis process itself (RELIABILITY.md, fault matrix):
//   F2  kill -9 under load, restart on the same AOF (appendfsync everysec and always)
//   F3  the server hung by SIGSTOP during claims, then SIGCONT
//   F11 the server BUSY running a long script (and the HTTP guard's 503), then SCRIPT KILL
//   F13 an eviction policy other than noeviction: the start-up warning, and the loss it warns of
// Each test checks that its fault really happened before asserting what a user relies on.

import Database from 'libsql';
import express from 'express';
import { Redis, type RedisOptions } from 'ioredis';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { requireEntryToken, queueRoutes } from '../../src/http/express.js';
import { EntryTokenError, QueueStateLostError, RedisStore, StoreUnavailableError, WaitingQueue, type Claim, type StoreWarning } from '../../src/index.js';
import { queueKeys } from '../../src/store/keys.js';
import { aofFiles, processState, startFaultRedis } from '../support/fault-redis.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { sleep, uniqueName } from '../support/unique.js';

/** The README's fast-failure client options. */
const FAST_FAIL: RedisOptions = {
  maxRetriesPerRequest: 1,
  enableOfflineQueue: false,
  retryStrategy: (times) => Math.min(times * 50, 500),
};

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function redisClient(url: string, options: RedisOptions = {}): Redis {
  const client = new Redis(url, options);
  client.on('error', () => undefined); // reconnect attempts while the server is down are expected
  cleanups.push(() => client.disconnect());
  return client;
}

/** Resolves once the client is connected (needed with enableOfflineQueue: false). */
function ready(client: Redis): Promise<void> {
  return client.status === 'ready' ? Promise.resolve() : new Promise((resolve) => client.once('ready', () => resolve()));
}

/** How a call failed, for error-classification counts. */
function errorKind(error: unknown): string {
  if (error instanceof QueueStateLostError) return 'QueueStateLostError';
  if (error instanceof StoreUnavailableError) return 'StoreUnavailableError';
  if (error instanceof EntryTokenError) return `EntryTokenError:${error.code}`;
  return error instanceof Error ? error.constructor.name : typeof error;
}

interface CallRecord {
  op: string;
  startedAt: number;
  ms: number;
  error?: string;
  cause?: string;
}

/** Runs one call, recording its duration and how it failed. Never throws. */
async function timed<T>(log: CallRecord[], op: string, call: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  const startedAt = performance.now();
  try {
    const value = await call();
    log.push({ op, startedAt, ms: performance.now() - startedAt });
    return { ok: true, value };
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    log.push({ op, startedAt, ms: performance.now() - startedAt, error: errorKind(error), cause: cause instanceof Error ? cause.message : undefined });
    return { ok: false, error };
  }
}

function countBy<T>(items: T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

async function until(condition: () => Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await condition().catch(() => false)) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

// ---------------------------------------------------------------------------------------------
// F2: kill -9 under load, restart on the same data folder
// ---------------------------------------------------------------------------------------------

describe('F2: Redis kill -9 under load, restarted on the same AOF', () => {
  for (const fsync of ['everysec', 'always'] as const) {
    it(`appendfsync ${fsync}: the outage fails fast with StoreUnavailableError, and no acknowledged enter, admission, claim or consume is lost`, async () => {
      const server = await startFaultRedis(['--appendonly', 'yes', '--appendfsync', fsync]);
      cleanups.push(() => server.stop());
      const client = redisClient(server.url, FAST_FAIL);
      const admin = redisClient(server.url, { retryStrategy: () => 50 }); // the test's own reads: offline queue on
      await Promise.all([ready(client), ready(admin)]);
      const timeoutMs = 500;
      const name = uniqueName('f2');
      const queue = new WaitingQueue({
        store: new RedisStore({ client }),
        name,
        admitRatePerSecond: 400,
        admitBurst: 100,
        entryTokenTtlSeconds: 120,
        claimTtlSeconds: 1,
        operationTimeoutMs: timeoutMs,
      });
      const keys = queueKeys('waitgate', name);

      // What the load was told (acknowledged), per member.
      const entered = new Set<string>();
      const admitted = new Map<string, string>(); // member -> token
      const claims = new Map<string, Claim>(); // acknowledged claims
      const consumeTried = new Map<string, Claim>(); // consume sent (acknowledged or not)
      const consumed = new Set<string>(); // consume answered true
      const calls: CallRecord[] = [];
      const pending: Array<{ memberId: string; entryToken: string }> = [];
      let running = true;
      let next = 0;

      const enterWorker = async () => {
        while (running) {
          const id = `m${next++}`;
          const r = await timed(calls, 'enter', () => queue.enter(id));
          if (r.ok) entered.add(id);
          else await sleep(20);
        }
      };
      const admitWorker = async () => {
        while (running) {
          const r = await timed(calls, 'admit', () => queue.admit());
          if (r.ok) {
            for (const a of r.value) {
              admitted.set(a.memberId, a.entryToken);
              pending.push(a);
            }
          }
          await sleep(10);
        }
      };
      let handled = 0;
      const untouched = new Set<string>(); // admitted members the load never claims
      const claimWorker = async () => {
        while (running) {
          const a = pending.shift();
          if (!a) {
            await sleep(5);
            continue;
          }
          const n = handled++;
          if (n % 3 === 0) {
            untouched.add(a.memberId); // a third stays READY, unclaimed
            continue;
          }
          const c = await timed(calls, 'claim', () => queue.claim(a.memberId, a.entryToken));
          if (!c.ok) continue;
          claims.set(a.memberId, c.value);
          if (n % 3 === 1) continue; // a third stays CLAIMED (its lease lapses)
          consumeTried.set(a.memberId, c.value);
          const r = await timed(calls, 'consume', () => queue.consume(c.value));
          if (r.ok && r.value) consumed.add(a.memberId);
        }
      };

      const workers = [...Array.from({ length: 8 }, enterWorker), admitWorker(), ...Array.from({ length: 4 }, claimWorker)];
      await sleep(2000);
      const killedAt = performance.now();
      const killSignal = await server.kill9();
      await sleep(1000); // the load goes on against a dead server
      running = false;
      await Promise.all(workers);

      // The fault happened: the process died of SIGKILL, with an AOF on disk.
      expect(killSignal).toBe('SIGKILL');
      expect(processState(server.pid)).toBeNull();
      const aof = aofFiles(server.dir);
      expect(aof.some((f) => f.name.endsWith('.incr.aof') && f.size > 0)).toBe(true);

      // During the outage every call failed, with StoreUnavailableError, and none hung.
      const outage = calls.filter((c) => c.startedAt >= killedAt);
      expect(outage.length).toBeGreaterThan(10);
      expect(outage.filter((c) => !c.error)).toEqual([]);
      expect(countBy(outage, (c) => c.error!)).toEqual({ StoreUnavailableError: outage.length });
      expect(Math.max(...outage.map((c) => c.ms))).toBeLessThan(timeoutMs + 500);

      // Restart on the same folder and port; the client reconnects by itself.
      await server.restart();
      const recoveryMs = await until(async () => (await queue.stats(), true), 10_000, 'the queue to answer after the restart');
      await ready(admin);
      expect(server.log).toMatch(/DB loaded from append only file|Reading the remaining AOF tail/);
      expect(await admin.info('persistence')).toMatch(/aof_enabled:1/);

      // Every acknowledged enter is WAITING, READY, or consumed (its claim id is in the consumed set).
      const consumedClaimIds = new Set(await admin.zrange(keys.consumed, 0, -1));
      const proven = (member: string) => consumeTried.has(member) && consumedClaimIds.has(consumeTried.get(member)!.claimId);
      const found = { WAITING: 0, READY: 0, CONSUMED: 0, LOST: 0 };
      const lostAdmissions: string[] = [];
      const all = [...entered];
      for (let i = 0; i < all.length; i += 500) {
        const batch = all.slice(i, i + 500);
        const statuses = await Promise.all(batch.map((m) => queue.state(m)));
        batch.forEach((member, j) => {
          const status = statuses[j]!;
          if (status === 'NOT_ENTERED') found[proven(member) ? 'CONSUMED' : 'LOST']++;
          else found[status]++;
          if (admitted.has(member) && status === 'WAITING') lostAdmissions.push(member);
        });
      }
      // Every acknowledged consume is still consumed; every acknowledged claim still fences
      // (a lapsed lease nobody re-claimed still consumes).
      const lostConsumes = [...consumed].filter((m) => !consumedClaimIds.has(consumeTried.get(m)!.claimId));
      const unconsumedClaims = [...claims.entries()].filter(([m]) => !consumeTried.has(m));
      const lostClaims: string[] = [];
      for (const [member, claim] of unconsumedClaims) if (!(await queue.consume(claim))) lostClaims.push(member);

      // A consumed token cannot be used again; a READY token still works.
      const reuse = await Promise.all([...consumed].slice(0, 20).map((m) => queue.claim(m, admitted.get(m)!).then(() => 'CLAIMED', errorKind)));
      const stillReady = [...untouched].slice(0, 20);
      const readyClaims = await Promise.all(stillReady.map((m) => queue.claim(m, admitted.get(m)!).then(() => 'CLAIMED', errorKind)));

      const report = {
        fsync,
        acknowledged: { enters: entered.size, admissions: admitted.size, claims: claims.size, consumes: consumed.size },
        afterRestart: found,
        lost: { enters: found.LOST, admissions: lostAdmissions.length, claims: lostClaims.length, consumes: lostConsumes.length },
        outage: { calls: outage.length, errors: countBy(outage, (c) => c.error!), maxMs: Math.round(Math.max(...outage.map((c) => c.ms))) },
        beforeKill: {
          calls: calls.length - outage.length,
          errors: countBy(
            calls.filter((c) => c.startedAt < killedAt && c.error),
            (c) => c.error!,
          ),
        },
        recoveryMs,
        aof,
      };
      console.log(`F2 ${JSON.stringify(report)}`);

      expect(entered.size).toBeGreaterThan(500);
      expect(consumed.size).toBeGreaterThan(20);
      expect(found.LOST).toBe(0);
      expect(found.WAITING + found.READY + found.CONSUMED).toBe(entered.size);
      expect(lostAdmissions).toEqual([]);
      expect(lostConsumes).toEqual([]);
      expect(lostClaims).toEqual([]);
      expect(reuse.every((r) => r === 'EntryTokenError:INVALID')).toBe(true);
      expect(readyClaims.every((r) => r === 'CLAIMED')).toBe(true);

      // And the queue works on: a newcomer joins at the back, admission goes on.
      expect((await queue.enter('after-restart')).status).toBe('WAITING');
      expect((await queue.admit()).length).toBeGreaterThan(0);
    });
  }
});

// ---------------------------------------------------------------------------------------------
// F3: SIGSTOP during claims
// ---------------------------------------------------------------------------------------------

describe('F3: Redis hung by SIGSTOP during claims', () => {
  it('fails claims fast while stopped; late-run claims hold a token only until the lease ends; every token is used exactly once', async () => {
    const server = await startRedisServer();
    cleanups.push(() => server.stop());
    const client = redisClient(server.url, { maxRetriesPerRequest: 1 }); // the connection stays up: commands wait in the socket
    const timeoutMs = 300;
    const queue = new WaitingQueue({
      store: new RedisStore({ client }),
      name: uniqueName('f3'),
      admitRatePerSecond: 200,
      admitBurst: 200,
      entryTokenTtlSeconds: 120,
      claimTtlSeconds: 1,
      operationTimeoutMs: timeoutMs,
    });
    const members = Array.from({ length: 120 }, (_, i) => `m${i}`);
    for (const m of members) await queue.enter(m);
    const tokens = new Map((await queue.admit()).map((a) => [a.memberId, a.entryToken]));
    expect(tokens.size).toBe(members.length);

    // The order table: one order per token id.
    const db = new Database(':memory:');
    cleanups.push(() => db.close());
    db.exec('CREATE TABLE orders (member_id TEXT NOT NULL, token_id TEXT NOT NULL UNIQUE)');
    const insert = db.prepare('INSERT INTO orders (member_id, token_id) VALUES (?, ?)');
    let uniqueViolations = 0;
    const placeOrder = (claim: Claim) => {
      try {
        insert.run(claim.memberId, claim.tokenId);
        return true;
      } catch (error) {
        if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') uniqueViolations++;
        return false;
      }
    };

    const calls: CallRecord[] = [];
    const claimUnknown: string[] = []; // claim timed out: no order placed, outcome unknown
    const consumeUnknown: Claim[] = []; // order committed, consume timed out
    const queueOfWork = members.slice(0, -1);
    // One order committed just before the hang, whose consume is sent while Redis is stopped.
    const held = members[members.length - 1]!;
    const heldClaim = await queue.claim(held, tokens.get(held)!);
    expect(placeOrder(heldClaim)).toBe(true);
    const worker = async () => {
      for (let m = queueOfWork.shift(); m !== undefined; m = queueOfWork.shift()) {
        const c = await timed(calls, 'claim', () => queue.claim(m, tokens.get(m)!));
        if (c.ok) {
          expect(placeOrder(c.value)).toBe(true);
          const r = await timed(calls, 'consume', () => queue.consume(c.value));
          if (!r.ok) consumeUnknown.push(c.value);
          else expect(r.value).toBe(true);
        } else {
          claimUnknown.push(m);
        }
        await sleep(50);
      }
    };
    const workers = Array.from({ length: 6 }, worker);

    await sleep(300);
    const stoppedAt = performance.now();
    server.signal('SIGSTOP');
    const heldConsume = timed(calls, 'consume', () => queue.consume(heldClaim)).then((r) => {
      if (!r.ok) consumeUnknown.push(heldClaim);
      return r;
    });
    await sleep(100);
    const stateWhileStopped = processState(server.process.pid!);
    await sleep(1400);
    server.signal('SIGCONT');
    const contAt = performance.now();
    await sleep(100);
    const stateAfterCont = processState(server.process.pid!);

    // Right after CONT, a timed-out claim that ran late holds its token: a retry is IN_USE.
    const retries = await Promise.all(claimUnknown.map(async (m) => ({ m, r: await queue.claim(m, tokens.get(m)!).then((c) => c, errorKind) })));
    await Promise.all([...workers, heldConsume]);

    expect(stateWhileStopped).toBe('T');
    expect(consumeUnknown).toContain(heldClaim);
    expect(stateAfterCont).not.toBe('T');
    const duringStop = calls.filter((c) => c.startedAt >= stoppedAt && c.startedAt < contAt - timeoutMs);
    expect(duringStop.length).toBeGreaterThan(5);
    expect(countBy(duringStop, (c) => c.error ?? 'ok')).toEqual({ StoreUnavailableError: duringStop.length });
    const failed = calls.filter((c) => c.error);
    expect(countBy(failed, (c) => c.error!)).toEqual({ StoreUnavailableError: failed.length });
    expect(Math.max(...calls.map((c) => c.ms))).toBeLessThan(timeoutMs + 500);
    expect(claimUnknown.length).toBeGreaterThan(0);
    const lateRunClaims = retries.filter((x) => x.r === 'EntryTokenError:IN_USE').map((x) => x.m);
    const retriedClaims = retries.filter((x) => typeof x.r !== 'string');
    expect(lateRunClaims.length + retriedClaims.length).toBe(claimUnknown.length);
    expect(lateRunClaims.length).toBeGreaterThan(0); // the stalled commands did run after CONT

    // After the lease: no CLAIMED token without a live claimer.
    const sinceCont = performance.now() - contAt;
    await sleep(Math.max(0, 1000 + 300 - sinceCont));
    expect((await queue.stats()).claimed).toBe(0);

    // Recovery by the rules a user follows: an order that committed retries its consume with
    // the same claim; a claim that failed is tried again, then orders and consumes.
    for (const claim of consumeUnknown) expect(await queue.consume(claim)).toBe(true);
    for (const x of retriedClaims) {
      const claim = x.r as Claim;
      expect(placeOrder(claim)).toBe(true);
      expect(await queue.consume(claim)).toBe(true);
    }
    for (const m of lateRunClaims) {
      const claim = await queue.claim(m, tokens.get(m)!); // the late claim's lease lapsed: READY again
      expect(placeOrder(claim)).toBe(true);
      expect(await queue.consume(claim)).toBe(true);
    }

    const perToken = db.prepare('SELECT token_id, COUNT(*) AS n FROM orders GROUP BY token_id').all() as Array<{ n: number }>;
    console.log(
      `F3 ${JSON.stringify({
        members: members.length,
        calls: calls.length,
        errors: countBy(failed, (c) => `${c.op}:${c.error}`),
        maxCallMs: Math.round(Math.max(...calls.map((c) => c.ms))),
        claimTimedOut: claimUnknown.length,
        lateRunClaims: lateRunClaims.length,
        consumeTimedOut: consumeUnknown.length,
        orders: perToken.length,
      })}`,
    );
    expect(uniqueViolations).toBe(0);
    expect(perToken).toHaveLength(members.length);
    expect(perToken.every((row) => row.n === 1)).toBe(true);
    expect(await queue.stats()).toMatchObject({ waiting: 0, active: 0, claimed: 0 });
    for (const m of members) {
      await expect(queue.claim(m, tokens.get(m)!)).rejects.toMatchObject({ code: 'INVALID' });
    }
  });
});

// ---------------------------------------------------------------------------------------------
// F11: BUSY
// ---------------------------------------------------------------------------------------------

describe('F11: Redis BUSY running a long script', () => {
  let server: RedisServer;
  afterAll(async () => server?.stop());

  it('answers StoreUnavailableError (HTTP 503) while BUSY, never an entry-token error, changes nothing, and recovers after SCRIPT KILL', async () => {
    server = await startRedisServer(['--busy-reply-threshold', '100']);
    const client = redisClient(server.url, { maxRetriesPerRequest: 1 });
    const busy = redisClient(server.url);
    const killer = redisClient(server.url);
    const probe = redisClient(server.url, { maxRetriesPerRequest: 1 });
    await Promise.all([client, busy, killer, probe].map((c) => c.ping()));
    const timeoutMs = 500;
    const queue = new WaitingQueue({
      store: new RedisStore({ client }),
      name: uniqueName('f11'),
      admitBurst: 3,
      claimTtlSeconds: 30,
      operationTimeoutMs: timeoutMs,
    });
    for (const m of ['alice', 'bob', 'carol', 'dave', 'erin']) await queue.enter(m);
    const admissions = await queue.admit(); // alice, bob, carol
    const token = new Map(admissions.map((a) => [a.memberId, a.entryToken]));
    const aliceClaim = await queue.claim('alice', token.get('alice')!);
    const before = await queue.stats();
    const errors: unknown[] = [];
    queue.on('error', (e) => errors.push(e));

    // An order API in front of the queue.
    let handlerRuns = 0;
    const app = express();
    app.use('/queue', queueRoutes(queue, { memberId: (req) => req.get('x-member') }));
    app.post('/orders', requireEntryToken(queue, { memberId: (req) => req.get('x-member') }), (_req, res) => {
      handlerRuns++;
      res.status(201).json({ ok: true });
    });
    const http = app.listen(0, '127.0.0.1');
    await new Promise((r) => http.once('listening', r));
    cleanups.push(() => new Promise((r) => http.close(r)));
    const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    const order = (member: string) => fetch(`${base}/orders`, { method: 'POST', headers: { 'x-member': member, 'x-entry-token': token.get(member)! } });

    // The busy script: 10 s of TIME calls, no writes, so SCRIPT KILL can stop it.
    const script = busy.eval("local t = tonumber(redis.call('TIME')[1]) while tonumber(redis.call('TIME')[1]) - t < 10 do end return 1", 0).then(
      () => 'finished',
      (e: Error) => e.message,
    );
    await until(
      async () =>
        (
          await probe.ping().then(
            () => '',
            (e: Error) => e.message,
          )
        ).startsWith('BUSY'),
      3000,
      'Redis to answer BUSY',
    );

    const calls: CallRecord[] = [];
    const results = await Promise.all([
      timed(calls, 'enter', () => queue.enter('frank')),
      timed(calls, 'position', () => queue.position('dave')),
      timed(calls, 'admit', () => queue.admit()),
      timed(calls, 'claim', () => queue.claim('bob', token.get('bob')!)),
      timed(calls, 'consume', () => queue.consume(aliceClaim)),
      timed(calls, 'release', () => queue.release(aliceClaim)),
      timed(calls, 'leave', () => queue.leave('erin')),
      timed(calls, 'stats', () => queue.stats()),
    ]);
    const httpBusy = await Promise.all([order('bob'), fetch(`${base}/queue/enter`, { method: 'POST', headers: { 'x-member': 'gina' } })]);
    const httpBodies = await Promise.all(httpBusy.map((r) => r.json() as Promise<{ error: { code: string } }>));
    // Still BUSY after all that: the calls above really met a busy server.
    expect(await probe.ping().catch((e: Error) => e.message)).toMatch(/^BUSY/);

    expect(results.every((r) => !r.ok)).toBe(true);
    expect(countBy(calls, (c) => c.error!)).toEqual({ StoreUnavailableError: calls.length });
    expect(calls.every((c) => /BUSY/.test(c.cause ?? ''))).toBe(true);
    expect(Math.max(...calls.map((c) => c.ms))).toBeLessThan(timeoutMs + 500);
    expect(httpBusy.map((r) => r.status)).toEqual([503, 503]);
    expect(httpBusy.every((r) => r.headers.get('retry-after') !== null)).toBe(true);
    expect(httpBodies.map((b) => b.error.code)).toEqual(['STORE_UNAVAILABLE', 'STORE_UNAVAILABLE']);
    expect(handlerRuns).toBe(0);

    expect(await killer.script('KILL')).toBe('OK');
    expect(await script).toMatch(/killed/i);

    // Recovered: nothing the refused calls asked for happened, and everything works again.
    expect(await queue.stats()).toEqual(before);
    expect((await queue.position('erin')).status).toBe('WAITING');
    expect((await order('bob')).status).toBe(201);
    expect(handlerRuns).toBe(1);
    expect(await queue.consume(aliceClaim)).toBe(true);
    expect((await queue.enter('frank')).status).toBe('WAITING');
    expect(errors).toEqual([]);
    console.log(
      `F11 ${JSON.stringify({ errors: countBy(calls, (c) => `${c.op}:${c.error}`), maxCallMs: Math.round(Math.max(...calls.map((c) => c.ms))), http: httpBusy.map((r) => r.status) })}`,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// F13: eviction policy
// ---------------------------------------------------------------------------------------------

describe('F13: maxmemory-policy other than noeviction', () => {
  /** Enters 2000 members and admits 50 on a server with allkeys-lru, then fills memory until the waiting line is evicted. */
  async function evictTheLine(options: { keepMetaHot: boolean }) {
    // 64 samples per eviction (the most): the oldest keys are found fast, so a key touched
    // during the fill (meta, with keepMetaHot) is not evicted by chance before them.
    const server = await startRedisServer(['--maxmemory-policy', 'allkeys-lru', '--maxmemory-samples', '64']);
    cleanups.push(() => server.stop());
    const client = redisClient(server.url, { maxRetriesPerRequest: 1 });
    const filler = redisClient(server.url, { maxRetriesPerRequest: 1 });
    const name = uniqueName('f13');
    const keys = queueKeys('waitgate', name);
    const queue = new WaitingQueue({ store: new RedisStore({ client }), name, admitBurst: 50 });
    const warnings: StoreWarning[] = [];
    queue.on('warning', (w) => warnings.push(w));

    const members = Array.from({ length: 2000 }, (_, i) => `member-${i}`);
    for (let i = 0; i < members.length; i += 200) await Promise.all(members.slice(i, i + 200).map((m) => queue.enter(m)));
    await queue.admit();
    const statsBefore = await queue.stats();

    // Let the queue's keys go idle (the LRU clock ticks in whole seconds), then run out of memory.
    await sleep(2100);
    const used = Number(/used_memory:(\d+)/.exec(await filler.info('memory'))![1]);
    await filler.config('SET', 'maxmemory', String(used + 2_000_000));
    const value = 'x'.repeat(8192);
    let writes = 0;
    while ((await filler.exists(keys.waiting)) === 1 && writes < 20_000) {
      if (options.keepMetaHot) await filler.hget(keys.meta, 'gen'); // touches the meta key alone
      await Promise.all(Array.from({ length: 50 }, () => filler.set(`filler:${writes++}`, value)));
    }
    const evicted = Number(/evicted_keys:(\d+)/.exec(await filler.info('stats'))![1]);
    const surviving = Object.entries(keys).filter(([, k]) => k !== keys.consumed);
    const exists = Object.fromEntries(await Promise.all(surviving.map(async ([n, k]) => [n, await filler.exists(k)] as const)));
    const outcome = countBy(await Promise.all(members.slice(50).map((m) => queue.position(m).then((p) => p.status, errorKind))), (x) => x);
    console.log(
      `F13 ${JSON.stringify({ policy: 'allkeys-lru', keepMetaHot: options.keepMetaHot, fillerWrites: writes, evictedKeys: evicted, keysLeft: exists, acknowledgedWaiting: members.length - 50, outcome })}`,
    );
    return { warnings, statsBefore, evicted, exists, outcome };
  }

  it('warns at start-up; and (demonstration) allkeys-lru really evicts the waiting line when memory runs out', async () => {
    const { warnings, statsBefore, evicted, exists, outcome } = await evictTheLine({ keepMetaHot: false });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ code: 'EVICTION_POLICY' });
    expect(warnings[0]!.message).toMatch(/allkeys-lru/);
    expect(statsBefore).toMatchObject({ waiting: 1950, active: 50 });
    expect(evicted).toBeGreaterThan(0);
    expect(exists.waiting).toBe(0);
    // I1 violated for every waiting member: none is WAITING any more (they read NOT_ENTERED, or
    // QueueStateLostError when the meta key went too).
    expect(outcome.WAITING ?? 0).toBe(0);
    expect((outcome.NOT_ENTERED ?? 0) + (outcome.QueueStateLostError ?? 0)).toBe(1950);
  });

  it('(demonstration) when the waiting line is evicted but the meta key is not, the loss is silent: members read NOT_ENTERED', async () => {
    // Redis samples keys to evict (64 at a time) and its LRU clock ticks in seconds, so now
    // and then it takes the hot meta key too, by chance: that run is not this case; try again.
    let run = await evictTheLine({ keepMetaHot: true });
    for (let attempt = 1; attempt < 3 && run.exists.meta === 0; attempt++) run = await evictTheLine({ keepMetaHot: true });
    const { warnings, exists, outcome } = run;
    expect(warnings.map((w) => w.code)).toEqual(['EVICTION_POLICY']);
    expect(exists).toMatchObject({ waiting: 0, meta: 1 });
    // The generation check cannot see a partial loss: no error, 1950 acknowledged members gone.
    expect(outcome).toEqual({ NOT_ENTERED: 1950 });
  });

  it('warns under volatile-lru too, though no waitgate key carries a TTL (so volatile-* evicts none of them: writes hit OOM instead)', async () => {
    const server = await startRedisServer(['--maxmemory-policy', 'volatile-lru']);
    cleanups.push(() => server.stop());
    const client = redisClient(server.url, { maxRetriesPerRequest: 1 });
    const name = uniqueName('f13v');
    const keys = queueKeys('waitgate', name);
    const queue = new WaitingQueue({ store: new RedisStore({ client }), name });
    const warnings: StoreWarning[] = [];
    queue.on('warning', (w) => warnings.push(w));
    for (let i = 0; i < 100; i++) await queue.enter(`m${i}`);
    const [a] = await queue.admit();
    await queue.consume(await queue.claim(a!.memberId, a!.entryToken));
    expect(warnings.map((w) => w.code)).toEqual(['EVICTION_POLICY']);
    expect(warnings[0]!.message).toMatch(/volatile-lru/);
    const present = Object.values(keys);
    const ttls = await Promise.all(present.map(async (k) => ((await client.exists(k)) ? client.pttl(k) : null)));
    expect(ttls.filter((t) => t !== null).length).toBeGreaterThanOrEqual(4);
    expect(ttls.filter((t) => t !== null && t !== -1)).toEqual([]);

    // Out of memory under volatile-lru: nothing of the queue can be evicted, so writes are refused whole.
    const before = await queue.stats();
    const used = Number(/used_memory:(\d+)/.exec(await client.info('memory'))![1]);
    await client.config('SET', 'maxmemory', String(Math.max(1, used - 100_000)));
    const calls: CallRecord[] = [];
    await timed(calls, 'enter', () => queue.enter('newcomer'));
    await timed(calls, 'admit', () => queue.admit());
    expect(calls.map((c) => c.error)).toEqual(['StoreUnavailableError', 'StoreUnavailableError']);
    expect(calls.every((c) => /OOM/.test(c.cause ?? ''))).toBe(true);
    expect(Number(/evicted_keys:(\d+)/.exec(await client.info('stats'))![1])).toBe(0);
    expect(await queue.stats()).toEqual({ ...before, admittedPerSecond: expect.any(Number) });
    expect((await queue.position('m50')).status).toBe('WAITING');
    await client.config('SET', 'maxmemory', '0');
  });
});
