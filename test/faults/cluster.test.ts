// F21: a real Redis Cluster, 3 masters + 3 replicas on loopback (cluster-node-timeout 1000).
//   1. Queues whose hash tags land on three different masters (checked with CLUSTER KEYSLOT
//      and CLUSTER SHARDS) all work through one ioredis Cluster client.
//   2. Under load on one queue (shoppers entering, polling, claiming, ordering into a
//      UNIQUE(tokenId) table, consuming; an admitter), its slot is migrated key by key to
//      another master (ASK, TRYAGAIN, then MOVED), and then that master is kill -9'd so
//      its replica takes over.
// What users rely on: every call either succeeds or fails with StoreUnavailableError
// (never a raw MOVED/ASK/TRYAGAIN/CLUSTERDOWN); afterwards nothing acknowledged is lost
// except what asynchronous replication can lose in the last moment before the kill
// (counted and reported), no member holds two tokens, no token is consumed twice, and
// at most one order per token commits.

import Database from 'libsql';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EntryTokenError, RedisStore, StoreUnavailableError, WaitingQueue, type Claim } from '../../src/index.js';
import { queueKeys } from '../../src/store/keys.js';
import { tokenIdOf } from '../../src/tokens.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { startRedisServer } from '../support/redis-server.js';
import { migrateSlot, parseInfo, startCluster, waitUntil, type TestCluster } from '../support/cluster.js';
import { COMPACT_JWS, signingWith } from '../support/signing-keys.js';
import { sleep, uniqueName } from '../support/unique.js';

const NODE_TIMEOUT_MS = 1000;
/** An acknowledged write can only be lost by the failover if it was acknowledged this shortly before the kill. */
const REPLICATION_LOSS_WINDOW_MS = 1000;

let cluster: TestCluster;
let client: Cluster;
const prefix = uniqueName('wg');

beforeAll(async () => {
  cluster = await startCluster({
    masters: 3,
    replicasPerMaster: 1,
    nodeTimeoutMs: NODE_TIMEOUT_MS,
    // A replica may always take over, however long its link was down (loopback test, not a data-age policy test).
    extraArgs: ['--cluster-replica-validity-factor', '0'],
  });
  // RELIABILITY.md §3.4: retryDelayOnFailover × maxRedirections above cluster-node-timeout.
  client = new Cluster(cluster.startupNodes, {
    redisOptions: { maxRetriesPerRequest: 1 },
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    retryDelayOnTryAgain: 50,
    maxRedirections: 32,
  });
  client.on('error', () => undefined); // node errors while a master is dead are expected
  await waitUntil('the Cluster client to be ready', async () => client.status === 'ready', 15_000);
}, 90_000);

afterAll(async () => {
  client?.disconnect();
  await cluster?.stop();
});

/** Queue names whose hash tags land on each master, one per master, via CLUSTER KEYSLOT and CLUSTER SHARDS. */
async function namesOnEachMaster(): Promise<Array<{ name: string; slot: number; master: number }>> {
  const masters = (await cluster.shards()).map((s) => s.master!.port);
  const picked = new Map<number, { name: string; slot: number; master: number }>();
  for (let i = 0; picked.size < masters.length && i < 1000; i++) {
    const name = `sale-${i}`;
    const slot = await cluster.keyslot(`{${prefix}:${name}}`);
    const master = await cluster.masterOf(slot);
    if (!picked.has(master)) picked.set(master, { name, slot, master });
  }
  expect(picked.size).toBe(masters.length);
  return masters.map((m) => picked.get(m)!);
}

/** Another queue name on `master`, in a slot of its own. */
async function anotherNameOn(master: number, taken: number[]): Promise<{ name: string; slot: number; master: number }> {
  for (let i = 0; i < 1000; i++) {
    const name = `hot-${i}`;
    const slot = await cluster.keyslot(`{${prefix}:${name}}`);
    if (!taken.includes(slot) && (await cluster.masterOf(slot)) === master) return { name, slot, master };
  }
  throw new Error(`no name found on ${master}`);
}

function errorKind(error: unknown): string {
  if (error instanceof StoreUnavailableError) {
    if ((error as { code: string }).code !== 'STORE_UNAVAILABLE') return `StoreUnavailableError:${(error as { code: string }).code}`;
    const cause = (error as { cause?: unknown }).cause;
    const reason = cause instanceof Error ? cause.message : error.message;
    if (/did not answer/.test(error.message)) return 'StoreUnavailableError:timeout';
    const word = /^(\w+)/.exec(reason)?.[1] ?? 'unknown';
    return `StoreUnavailableError:${/Too many Cluster redirections/.test(reason) ? 'maxRedirections' : word}`;
  }
  if (error instanceof EntryTokenError) return `EntryTokenError:${error.code}`;
  return `unexpected:${error instanceof Error ? `${error.constructor.name}: ${error.message}` : String(error)}`;
}

describe('RedisStore on a 3-master Redis Cluster', () => {
  let placement: Array<{ name: string; slot: number; master: number }>;
  // The queues on the three masters hand out signed passes (SPEC §15), before and after the
  // failover, with the same keys in both tests (a queue signs or not).
  const signing = signingWith();

  it('runs queues whose hash tags land on three different masters, each whole on its own master', async () => {
    placement = await namesOnEachMaster();
    expect(new Set(placement.map((p) => p.master)).size).toBe(3);
    const store = new RedisStore({ client, prefix });
    for (const { name, slot, master } of placement) {
      const queue = new WaitingQueue({ store, name, admitBurst: 5, signing });
      for (let i = 0; i < 10; i++) await queue.enter(`m${i}`);
      const admissions = await queue.admit();
      expect(admissions.map((a) => a.memberId)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
      expect(admissions[0]!.entryToken).toMatch(COMPACT_JWS);
      const claim = await queue.claim('m0', admissions[0]!.entryToken);
      expect(await queue.consume(claim)).toBe(true);
      await expect(queue.claim('m0', admissions[0]!.entryToken)).rejects.toMatchObject({ code: 'INVALID' }); // used once
      expect(await queue.stats()).toMatchObject({ waiting: 5, active: 4, claimed: 0 });
      // Every key of the queue is on that master, in the slot of its tag, and on no other master.
      const node = cluster.node(master).admin;
      // (No claim left, so no leases key; nobody revoked, so no revocations key; no control changed, so no log;
      // nobody entered under an identity or with an invite code, so no identities, lanes or codes keys.)
      const {
        leases: _noLeaseLeft,
        revoked: _noneRevoked,
        log: _noChange,
        identities: _noIdentity,
        lanes: _noLane,
        codes: _noCode,
        ...written
      } = queueKeys(prefix, name);
      for (const key of Object.values(written)) {
        expect(Number(await node.call('CLUSTER', 'KEYSLOT', key))).toBe(slot);
        expect(await node.exists(key)).toBe(1);
      }
      expect(Number(await node.call('CLUSTER', 'COUNTKEYSINSLOT', slot))).toBe(Object.keys(written).length);
    }
  });

  it('absorbs a reshard of a loaded queue’s slot and a kill -9 of its new master: only StoreUnavailableError, no double effect', async () => {
    const [first, b] = placement;
    // The loaded queue: on the first master, in a slot of its own (the first test's queues stay as they are).
    const a = await anotherNameOn(
      first!.master,
      placement.map((p) => p.slot),
    );
    const store = new RedisStore({ client, prefix });
    const db = new Database(':memory:');
    db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, member_id TEXT NOT NULL, token_id TEXT NOT NULL UNIQUE)');
    const insertOrder = db.prepare('INSERT INTO orders (member_id, token_id) VALUES (?, ?)');
    const queue = () => new WaitingQueue({ store, name: a.name, admitRatePerSecond: 100, admitBurst: 10, claimTtlSeconds: 2, entryTokenTtlSeconds: 300 });
    const sale = queue();

    // ---- the load ----
    const MEMBERS = 400;
    const phases = { start: Date.now(), reshardStart: 0, reshardEnd: 0, kill: 0, healthy: 0, end: 0 };
    const errors: Array<{ op: string; at: number; kind: string }> = [];
    const regressions: Array<{ member: string; at: number; lastAckAt: number; what: string }> = [];
    let stop = false;
    let duplicateOrdersRefused = 0;
    let consumeFalse = 0;

    interface Shopper {
      member: string;
      lastAckAt: number;
      tokens: string[];
      consumed?: { claim: Claim; at: number };
      /** enter() calls that failed with StoreUnavailableError: their outcome is unknown, they may still run. */
      unknownEnters: number;
      done: boolean;
    }
    const shoppers: Shopper[] = [];

    /** Retries a store call while it fails with StoreUnavailableError (safe: every operation is idempotent or fenced). */
    async function call<T>(op: string, run: () => Promise<T>, shopper?: Shopper): Promise<T> {
      for (;;) {
        try {
          return await run();
        } catch (error) {
          if (error instanceof EntryTokenError) throw error;
          errors.push({ op, at: Date.now(), kind: errorKind(error) });
          if (op === 'enter' && shopper) shopper.unknownEnters++;
          if (!(error instanceof StoreUnavailableError) || (error as { code: string }).code !== 'STORE_UNAVAILABLE' || stop) throw error;
          await sleep(50);
        }
      }
    }

    async function shop(s: Shopper): Promise<void> {
      const q = queue();
      await call('enter', () => q.enter(s.member), s);
      s.lastAckAt = Date.now();
      let highWater: 'WAITING' | 'READY' = 'WAITING';
      while (!stop) {
        const p = await call('position', () => q.position(s.member));
        if (p.status === 'NOT_ENTERED') {
          regressions.push({ member: s.member, at: Date.now(), lastAckAt: s.lastAckAt, what: `${highWater} -> NOT_ENTERED` });
          await call('enter', () => q.enter(s.member), s); // what a real client does: join again
          s.lastAckAt = Date.now();
          highWater = 'WAITING';
          continue;
        }
        if (p.status === 'WAITING') {
          if (highWater === 'READY') {
            regressions.push({ member: s.member, at: Date.now(), lastAckAt: s.lastAckAt, what: 'READY -> WAITING' });
            highWater = 'WAITING';
          }
          await sleep(100 + Math.random() * 100);
          continue;
        }
        const token = p.entryToken!;
        if (highWater === 'READY' && s.tokens.at(-1) !== token) {
          regressions.push({ member: s.member, at: Date.now(), lastAckAt: s.lastAckAt, what: 'READY with another token' });
        }
        if (s.tokens.at(-1) !== token) s.tokens.push(token);
        highWater = 'READY';
        let claim: Claim;
        try {
          claim = await call('claim', () => q.claim(s.member, token));
        } catch (error) {
          if (!(error instanceof EntryTokenError)) throw error;
          await sleep(error.code === 'IN_USE' ? 200 : 50); // IN_USE: an earlier claim whose reply was lost holds the lease
          continue;
        }
        s.lastAckAt = Date.now();
        try {
          insertOrder.run(s.member, claim.tokenId);
        } catch (error) {
          if ((error as { code?: string }).code !== 'SQLITE_CONSTRAINT_UNIQUE') throw error;
          duplicateOrdersRefused++; // the order table refused a second order for this token
          await call('release', () => q.release(claim));
          s.done = true;
          return;
        }
        const ok = await call('consume', () => q.consume(claim));
        s.lastAckAt = Date.now();
        if (ok) s.consumed = { claim, at: s.lastAckAt };
        else consumeFalse++;
        s.done = true;
        return;
      }
    }

    let admitted = 0;
    const admitter = (async () => {
      while (!stop) {
        try {
          admitted += (await sale.admit()).length;
        } catch (error) {
          errors.push({ op: 'admit', at: Date.now(), kind: errorKind(error) });
        }
        await sleep(50);
      }
    })();

    const failures: unknown[] = [];
    const running: Array<Promise<void>> = [];
    const arrivals = (async () => {
      for (let i = 0; i < MEMBERS && !stop; i++) {
        const s: Shopper = { member: `member-${i}`, lastAckAt: 0, tokens: [], unknownEnters: 0, done: false };
        shoppers.push(s);
        running.push(shop(s).catch((error: unknown) => void failures.push(error)));
        await sleep(12);
      }
    })();

    // ---- the faults ----
    await sleep(1500);
    const source = a.master;
    const target = b!.master;
    const targetReplica = (await cluster.shards()).find((s) => s.master!.port === target)!.replicas[0]!.port;
    const sourceStatsBefore = parseInfo(await cluster.node(source).admin.info('commandstats'));
    const sourceErrorsBefore = parseInfo(await cluster.node(source).admin.info('errorstats'));
    phases.reshardStart = Date.now();
    const movedKeys = await migrateSlot(cluster, a.slot, target, 60);
    phases.reshardEnd = Date.now();
    await sleep(700); // stale clients meet MOVED
    const sourceStats = parseInfo(await cluster.node(source).admin.info('commandstats'));
    const targetStats = parseInfo(await cluster.node(target).admin.info('commandstats'));
    const sourceErrors = parseInfo(await cluster.node(source).admin.info('errorstats'));
    const targetErrors = parseInfo(await cluster.node(target).admin.info('errorstats'));
    /** Redirection replies a node sent, by type (INFO errorstats counts every error reply by its first word). */
    const redirects = (now: Record<string, string>, before: Record<string, string> = {}) =>
      Object.fromEntries(
        ['MOVED', 'ASK', 'TRYAGAIN'].map((t) => {
          const count = (info: Record<string, string>) => Number(/count=(\d+)/.exec(info[`errorstat_${t}`] ?? '')?.[1] ?? 0);
          return [t, count(now) - count(before)];
        }),
      );
    expect(await cluster.masterOf(a.slot)).toBe(target);

    phases.kill = Date.now();
    cluster.node(target).server.signal('SIGKILL');
    await cluster.waitHealthy({ slot: a.slot, masterPort: targetReplica, timeoutMs: 30_000 });
    phases.healthy = Date.now();

    // Let every shopper finish, bounded (a hang-catching bound, not a speed requirement).
    await arrivals;
    const deadline = Date.now() + 40_000;
    while (Date.now() < deadline && shoppers.some((s) => !s.done) && failures.length === 0) await sleep(100);
    stop = true;
    await Promise.all(running);
    await admitter;
    phases.end = Date.now();

    // ---- what happened ----
    const rel = (t: number) => t - phases.start;
    const byKind = (list: typeof errors) => list.reduce<Record<string, number>>((m, e) => ((m[e.kind] = (m[e.kind] ?? 0) + 1), m), {});
    const inReshard = errors.filter((e) => e.at < phases.kill);
    const inFailover = errors.filter((e) => e.at >= phases.kill && e.at <= phases.healthy);
    const afterFailover = errors.filter((e) => e.at > phases.healthy);
    const rejectedOnSource = ['eval', 'evalsha'].reduce(
      (n, c) =>
        n +
        Number(/rejected_calls=(\d+)/.exec(sourceStats[`cmdstat_${c}`] ?? '')?.[1] ?? 0) -
        Number(/rejected_calls=(\d+)/.exec(sourceStatsBefore[`cmdstat_${c}`] ?? '')?.[1] ?? 0),
      0,
    );
    const askingOnTarget = Number(/calls=(\d+)/.exec(targetStats.cmdstat_asking ?? '')?.[1] ?? 0);

    // ---- invariants, after quiescence, from the new master ----
    const finals = new Map<string, string>();
    for (const s of shoppers) finals.set(s.member, (await call('final position', () => sale.position(s.member))).status);
    // A consumed member must be NOT_ENTERED. Two ways it may not be:
    //  - the failover lost the consume (asynchronous replication): READY again with the consumed token;
    //    a second order for that token must then be refused by the order table;
    //  - an enter() of the member that failed with StoreUnavailableError ran late, after the
    //    member's retry had gone all the way to consume: the member is back in the line and is
    //    admitted again with a new token (see the deterministic test below).
    const lostConsumes: Shopper[] = [];
    const backAfterConsume: Array<{ member: string; final: string; unknownEnters: number }> = [];
    for (const s of shoppers.filter((x) => x.consumed)) {
      const final = finals.get(s.member)!;
      if (final === 'NOT_ENTERED') continue;
      const live = final === 'READY' ? await call('token', () => sale.token(s.member)) : null;
      if (live && tokenIdOf(live.entryToken) === s.consumed!.claim.tokenId) lostConsumes.push(s);
      else backAfterConsume.push({ member: s.member, final, unknownEnters: s.unknownEnters });
    }
    const consumedTokenIds = shoppers.filter((s) => s.consumed).map((s) => s.consumed!.claim.tokenId);
    const ordersPerToken = db.prepare('SELECT token_id, COUNT(*) AS n FROM orders GROUP BY token_id HAVING n > 1').all();
    const ordersPerMember = db.prepare('SELECT member_id, COUNT(*) AS n FROM orders GROUP BY member_id HAVING n > 1').all() as Array<{ member_id: string }>;
    const twoTokens = shoppers.filter((s) => s.tokens.length > 1);

    let secondOrdersRefused = 0;
    for (const s of lostConsumes) {
      const live = (await call('token', () => sale.token(s.member)))!;
      const again = await call('claim', () => sale.claim(s.member, live.entryToken)).catch((e: unknown) => e);
      if (again instanceof EntryTokenError) continue; // the lost claim's lease is still live: IN_USE
      expect(() => insertOrder.run(s.member, (again as Claim).tokenId)).toThrow(/UNIQUE/);
      secondOrdersRefused++;
      await call('release', () => sale.release(again as Claim));
    }

    // Redis-side snapshot of queue A: every member in one place, one token per member, no token shared.
    const k = queueKeys(prefix, a.name);
    const waitingSet = new Set(await client.zrange(k.waiting, 0, -1));
    const tokenRecords = await client.hgetall(k.tokens);
    const activeSet = new Set(await client.zrange(k.active, 0, -1));
    const inBoth = [...waitingSet].filter((m) => m in tokenRecords);
    const tokenValues = Object.values(tokenRecords).map((r) => r.split('|').at(-1));

    const report = {
      durationsMs: {
        total: phases.end - phases.start,
        reshard: phases.reshardEnd - phases.reshardStart,
        killToHealthy: phases.healthy - phases.kill,
      },
      phasesMs: {
        reshardStart: rel(phases.reshardStart),
        reshardEnd: rel(phases.reshardEnd),
        kill: rel(phases.kill),
        healthy: rel(phases.healthy),
        end: rel(phases.end),
      },
      members: shoppers.length,
      finished: shoppers.filter((s) => s.done).length,
      admitted,
      consumed: consumedTokenIds.length,
      orders: (db.prepare('SELECT COUNT(*) AS n FROM orders').get() as { n: number }).n,
      migratedKeys: movedKeys,
      redirections: {
        rejectedScriptCallsOnSource: rejectedOnSource,
        askingOnTarget,
        sentBySource: redirects(sourceErrors, sourceErrorsBefore),
        sentByTarget: redirects(targetErrors),
      },
      errors: { duringReshard: byKind(inReshard), duringFailover: byKind(inFailover), afterFailover: byKind(afterFailover) },
      replicationLoss: {
        regressions: regressions.length,
        lostConsumes: lostConsumes.length,
        membersWithTwoTokens: twoTokens.length,
        duplicateOrdersRefusedDuringRun: duplicateOrdersRefused,
        secondOrdersRefusedAfterRun: secondOrdersRefused,
        membersWithTwoOrders: ordersPerMember.length,
      },
      lateEnters: {
        membersWithAnUnknownEnter: shoppers.filter((s) => s.unknownEnters > 0).length,
        backInLineAfterConsume: backAfterConsume,
      },
      consumeFalse,
    };
    console.log('F21 cluster reshard + failover:', JSON.stringify(report, null, 2));

    // Every shopper finished: the system recovered with no manual step (I9).
    expect(failures).toEqual([]);
    expect(report.finished).toBe(MEMBERS);
    // The faults really happened: the slot moved (with redirections on the way), its master died, a replica took over.
    expect(movedKeys).toBeGreaterThanOrEqual(5);
    expect(rejectedOnSource).toBeGreaterThan(0);
    expect(report.redirections.sentBySource.ASK).toBeGreaterThan(0); // half-migrated: keys already moved are asked of the target
    expect(report.redirections.sentBySource.MOVED).toBeGreaterThan(0); // migrated: stale slot maps are corrected
    expect(askingOnTarget).toBeGreaterThan(0);
    expect(await cluster.masterOf(a.slot)).toBe(targetReplica);
    expect(Number(await cluster.node(source).admin.call('CLUSTER', 'COUNTKEYSINSLOT', a.slot))).toBe(0);
    expect(inFailover.length).toBeGreaterThan(0);
    // Redirections were absorbed: calls succeed or fail with StoreUnavailableError, never anything else.
    expect(errors.filter((e) => !e.kind.startsWith('StoreUnavailableError:') || e.kind.includes('QUEUE_STATE_LOST'))).toEqual([]);
    expect(errors.filter((e) => /MOVED|ASK|maxRedirections/.test(e.kind))).toEqual([]);
    // The reshard alone was a latency spike only: no call failed before the kill but for
    // its timeout (operationTimeoutMs, 1 s: on 2 shared cores beside other fault files a
    // spike can pass it), and at most a handful of the 400 shoppers' calls.
    expect(inReshard.filter((e) => e.kind !== 'StoreUnavailableError:timeout')).toEqual([]);
    expect(inReshard.length).toBeLessThanOrEqual(5);
    // Anything lost was acknowledged in the last moment before the kill (asynchronous replication), nothing else.
    for (const r of regressions) {
      expect(r.at).toBeGreaterThan(phases.kill);
      expect(r.lastAckAt).toBeGreaterThan(phases.kill - REPLICATION_LOSS_WINDOW_MS);
    }
    for (const s of lostConsumes) {
      expect(s.consumed!.at).toBeGreaterThan(phases.kill - REPLICATION_LOSS_WINDOW_MS);
      expect(s.consumed!.at).toBeLessThanOrEqual(phases.kill);
    }
    // A member back in the line after its consume is explained by one of its own enter() calls
    // whose outcome was unknown (the known defect reproduced deterministically below), never by anything else.
    for (const b of backAfterConsume) expect(b.unknownEnters).toBeGreaterThan(0);
    expect(twoTokens.map((s) => s.member).every((m) => regressions.some((r) => r.member === m))).toBe(true);
    // No token consumed twice, at most one order per token (the UNIQUE column), and the
    // order table had to refuse a second order only where Redis lost a consume.
    expect(new Set(consumedTokenIds).size).toBe(consumedTokenIds.length);
    expect(ordersPerToken).toEqual([]);
    expect(duplicateOrdersRefused).toBeLessThanOrEqual(regressions.length);
    expect(ordersPerMember.every((o) => twoTokens.some((s) => s.member === o.member_id))).toBe(true);
    // No member both waiting and holding a token; one token per member; no token shared by two.
    expect(inBoth).toEqual([]);
    expect(new Set(tokenValues).size).toBe(tokenValues.length);
    expect([...activeSet].sort()).toEqual(Object.keys(tokenRecords).sort());
    // The old tokens of a member that got a new one are dead.
    for (const s of twoTokens) {
      for (const old of s.tokens.slice(0, -1)) {
        await expect(sale.claim(s.member, old)).rejects.toMatchObject({ code: 'INVALID' });
      }
    }
  });

  it('keeps every queue working after the failover, including the one that lived on the killed master', async () => {
    const store = new RedisStore({ client, prefix });
    for (const { name } of placement) {
      const queue = new WaitingQueue({ store, name, admitBurst: 5, signing });
      // What the first test left: m5..m9 waiting, m1..m4 READY (replicated long before the kill).
      const stats = await queue.stats();
      expect(stats.waiting).toBe(5);
      expect(stats.active).toBe(4);
      await queue.enter('late');
      const admissions = await queue.admit();
      expect(admissions.map((x) => x.memberId)).toEqual(['m5', 'm6', 'm7', 'm8', 'm9']);
      const token = (await queue.token('m1'))!;
      const claim = await queue.claim('m1', token.entryToken);
      expect(await queue.consume(claim)).toBe(true);
      await expect(queue.claim('m1', token.entryToken)).rejects.toMatchObject({ code: 'INVALID' }); // used once
      expect((await queue.position('late')).rank).toBe(0);
    }
  });
});

// The defect behind "back in line after consume" above, made deterministic. On a Cluster, a
// command that met the dead master waits in ioredis's failover retry loop, while the caller's
// own retry (a new command) can take another path and get through first; the old command then
// runs later. The same happens across two app instances: here instance A's link is held (a
// blackhole, delivered late), the shopper's retry goes through instance B all the way to an
// order, and then A's enter arrives.
describe('an enter() that failed with StoreUnavailableError and runs late', () => {
  it('does not put back in the line a member whose retried entry already went all the way to an order', async () => {
    const server = await startRedisServer();
    const proxy = await FaultProxy.start({ port: server.port });
    const viaProxy = new Redis(proxy.url, { maxRetriesPerRequest: 1 });
    const direct = new Redis(server.url, { maxRetriesPerRequest: 1 });
    viaProxy.on('error', () => undefined);
    const db = new Database(':memory:');
    db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, member_id TEXT NOT NULL, token_id TEXT NOT NULL UNIQUE)');
    const insertOrder = db.prepare('INSERT INTO orders (member_id, token_id) VALUES (?, ?)');
    try {
      const name = uniqueName('q');
      const instanceA = new WaitingQueue({ store: new RedisStore({ client: viaProxy }), name, operationTimeoutMs: 300 });
      const instanceB = new WaitingQueue({ store: new RedisStore({ client: direct }), name });
      await instanceA.stats(); // connected, the first call's checks done
      await instanceB.stats();

      proxy.startBlackhole();
      await expect(instanceA.enter('bob')).rejects.toBeInstanceOf(StoreUnavailableError); // outcome unknown: "retrying is safe"
      await instanceB.enter('bob');
      const [admission] = await instanceB.admit();
      expect(admission?.memberId).toBe('bob');
      const claim = await instanceB.claim('bob', admission!.entryToken);
      insertOrder.run('bob', claim.tokenId);
      expect(await instanceB.consume(claim)).toBe(true);
      expect(await instanceB.state('bob')).toBe('NOT_ENTERED');

      proxy.endBlackhole();
      await viaProxy.ping(); // same connection: once PING answers, the held enter has run
      // What the shopper relies on: the retry was safe. One admission, one order.
      expect(await instanceB.state('bob')).toBe('NOT_ENTERED');
      const again = await instanceB.admit();
      expect(again.map((x) => x.memberId)).not.toContain('bob');
      for (const x of again) insertOrder.run(x.memberId, tokenIdOf(x.entryToken)); // a second order would pass UNIQUE(tokenId)
      expect((db.prepare("SELECT COUNT(*) AS n FROM orders WHERE member_id = 'bob'").get() as { n: number }).n).toBe(1);
    } finally {
      viaProxy.disconnect();
      direct.disconnect();
      await proxy.close();
      await server.stop();
    }
  });
});
