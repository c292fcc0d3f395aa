// Per-operation micro benchmarks: waitgate vs the naive design vs one trivial EVALSHA,
// at concurrency 1 and 64, in interleaved short rounds.

import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import * as waitgate from 'waitgate';
import { bulkEnter, bulkZadd, ids, queueKeys } from '../lib/bulk-enter.mjs';
import { commandStats, diffStats } from '../lib/redis-info.mjs';
import { Latencies, median, round } from '../lib/stats.mjs';

const OPERATION_TIMEOUT_MS = 10_000; // generous: a loaded 2-core machine must not turn slow calls into errors
const POSITION_LINE = 10_000; // members waiting while `position` is measured
const ADMIT_BATCH = 50; // members per admit() call

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const newToken = () => randomBytes(32).toString('base64url');

/**
 * The operations. Each variant has `run(i)` (one operation) and optionally
 * `prepare(n)` (untimed: state for up to n operations; returns how many it prepared)
 * and `cleanup()` (untimed).
 */
function defineOperations({ wg, naive, floor, control, floorSha, pkg = waitgate, tag = '' }) {
  const { RedisStore, WaitingQueue } = pkg;
  const store = new RedisStore({ client: wg });
  // Abandonment off: members are bulk-loaded without signs of life (its costs are measured in presence.mjs).
  const queueOf = (name, extra = {}) => new WaitingQueue({ store, name, operationTimeoutMs: OPERATION_TIMEOUT_MS, abandonAfterSeconds: null, ...extra });
  const floorCall = () => floor.evalsha(floorSha, 0);
  // The floor with the call's shape: the same trivial script, sent with the keys and
  // arguments that waitgate's script for that operation takes (keys of one queue, a
  // 16-character generation, the member id, ...). What ioredis and Redis cost for
  // those arguments alone, before the script does anything.
  const shapedFloorCall = (keyNames, ...args) => floor.evalsha(floorSha, keyNames.length, ...keyNames, 'a1b2c3d4e5f60718', ...args);
  let unique = 0;
  const fresh = (p) => `${tag}${p}${unique++}`;
  // Every key of a queue shares its hash tag: SCAN finds them whatever the key schema is.
  const unlinkQueues = async (names) => {
    for (const name of names) {
      const tag = queueKeys(name).meta.replace(/:meta$/, '');
      const pattern = `${tag.replace(/[[\]{}*?\\]/g, '\\$&')}:*`;
      let cursor = '0';
      do {
        const [next, keys] = await control.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        if (keys.length) await control.unlink(...keys);
      } while (cursor !== '0');
    }
  };
  const unlinkKeys = async (keys) => {
    for (let i = 0; i < keys.length; i += 1000) await control.unlink(...keys.slice(i, i + 1000));
  };

  // ---------- enter: a new member joins
  const enterQueue = queueOf(`${tag}bench-enter`);
  const enter = {
    waitgate: {
      async run() {
        const p = await enterQueue.enter(fresh('e'));
        if (p.status !== 'WAITING') throw new Error(`enter answered ${p.status}`);
      },
    },
    naive: {
      async run() {
        const id = fresh('e');
        if ((await naive.zscore('naive:enter:waiting', id)) === null) await naive.zadd('naive:enter:waiting', Date.now(), id);
      },
    },
    floor: { run: floorCall },
    'shaped floor': {
      keys: ((k) => [k.waiting, k.tokens, k.active, k.leases, k.meta])(queueKeys(`${tag}bench-enter`)),
      run() {
        return shapedFloorCall(this.keys, fresh('e'), Date.now() + OPERATION_TIMEOUT_MS);
      },
    },
  };

  // ---------- position: a waiting member polls (10,000 waiting)
  const positionIds = ids('p', 0, POSITION_LINE);
  const positionName = `${tag}bench-position`;
  const positionQueue = queueOf(positionName);
  const cachedQueue = queueOf(positionName, { positionCache: true });
  const pick = () => positionIds[(Math.random() * POSITION_LINE) | 0];
  const position = {
    waitgate: {
      async run() {
        const p = await positionQueue.position(pick());
        if (p.status !== 'WAITING') throw new Error(`position answered ${p.status}`);
      },
    },
    'waitgate positionCache': {
      async run() {
        const p = await cachedQueue.position(pick());
        if (p.status !== 'WAITING') throw new Error(`position answered ${p.status}`);
      },
    },
    naive: {
      async run() {
        const id = pick();
        const token = await naive.get(`naive:token:${id}`);
        if (token !== null) return;
        const rank = await naive.zrank('naive:position:waiting', id);
        await naive.zcard('naive:position:waiting');
        if (rank === null) throw new Error('not waiting');
      },
    },
    floor: { run: floorCall },
    'shaped floor': {
      keys: ((k) => [k.waiting, k.tokens, k.meta])(queueKeys(positionName)),
      run() {
        return shapedFloorCall(this.keys, pick());
      },
    },
  };
  const preparePosition = async () => {
    await positionQueue.enter('p-seed');
    await bulkEnter(control, positionName, positionIds);
    if (!tag) await bulkZadd(control, 'naive:position:waiting', positionIds);
    for (const id of positionIds) await cachedQueue.position(id); // each member polled once: the cache knows its sequence
  };

  // ---------- admit: one admit() of 50 members (tokens issued).
  // Redis TIME is read in whole milliseconds, so a bucket refills nothing between two
  // admits within one millisecond: calls are spread over `spread` queues (each sees its
  // calls >= 1 ms apart), every queue with rate 1,000,000/s and burst 50, so each call admits 50.
  let admitQueues = [];
  let admitNames = [];
  const admit = {
    waitgate: {
      async prepare(n, concurrency) {
        const spread = Math.max(16, concurrency);
        const perQueue = Math.ceil(n / spread);
        admitNames = Array.from({ length: spread }, () => fresh('bench-admit-'));
        admitQueues = admitNames.map((name) => queueOf(name, { admitRatePerSecond: 1_000_000, admitBurst: ADMIT_BATCH }));
        for (const [i, q] of admitQueues.entries()) {
          await q.enter(`a-seed-${i}`);
          await q.leave(`a-seed-${i}`);
          await bulkEnter(control, admitNames[i], ids(`a${i}-`, 0, perQueue * ADMIT_BATCH), { batch: 2000 });
        }
        await sleep(2);
        return perQueue * spread;
      },
      async run(i) {
        const admitted = await admitQueues[i % admitQueues.length].admit();
        if (admitted.length !== ADMIT_BATCH) throw new Error(`admit admitted ${admitted.length}`);
      },
      cleanup: () => unlinkQueues(admitNames),
    },
    naive: {
      popped: [],
      async prepare(n) {
        this.popped = [];
        await bulkZadd(control, 'naive:admit:waiting', ids('na-', 0, n * ADMIT_BATCH), { batch: 2000 });
        return n;
      },
      async run() {
        const popped = await naive.zpopmin('naive:admit:waiting', ADMIT_BATCH);
        const sets = [];
        for (let j = 0; j < popped.length; j += 2) {
          const key = `naive:token:${popped[j]}`;
          this.popped.push(key);
          sets.push(naive.set(key, newToken(), 'EX', 300));
        }
        await Promise.all(sets);
        if (sets.length !== ADMIT_BATCH) throw new Error(`naive admit popped ${sets.length}`);
      },
      async cleanup() {
        await control.unlink('naive:admit:waiting');
        await unlinkKeys(this.popped);
      },
    },
    floor: { run: floorCall },
  };

  // ---------- claim + consume: an order request claims its token, commits, consumes.
  let claimQueue = null;
  let claimName = '';
  let claimable = [];
  const claimConsume = {
    waitgate: {
      async prepare(n) {
        claimName = fresh('bench-claim-');
        claimQueue = queueOf(claimName, { admitRatePerSecond: 1_000_000, admitBurst: 10_000 });
        await claimQueue.enter('c-seed');
        await bulkEnter(control, claimName, ids('c-', 0, n), { batch: 2000 });
        claimable = [];
        while (claimable.length < n) {
          const admitted = await claimQueue.admit();
          for (const a of admitted) if (a.memberId !== 'c-seed') claimable.push(a);
          await sleep(11); // the bucket refills 10,000 per 10 ms
        }
        return claimable.length;
      },
      async run(i) {
        const { memberId, entryToken } = claimable[i];
        const claim = await claimQueue.claim(memberId, entryToken);
        if (!(await claimQueue.consume(claim))) throw new Error('consume answered false');
      },
      cleanup: () => unlinkQueues([claimName]),
    },
    naive: {
      members: [],
      async prepare(n) {
        this.members = ids(fresh('nc-'), 0, n).map((id) => ({ key: `naive:token:${id}`, token: newToken() }));
        for (let i = 0; i < n; i += 1000) {
          const pipeline = control.pipeline();
          for (const m of this.members.slice(i, i + 1000)) pipeline.set(m.key, m.token, 'EX', 300);
          await pipeline.exec();
        }
        return n;
      },
      async run(i) {
        const m = this.members[i];
        const stored = await naive.get(m.key);
        if (stored !== m.token) throw new Error('naive token mismatch');
        await naive.del(m.key);
      },
      async cleanup() {
        await unlinkKeys(this.members.map((m) => m.key));
      },
    },
    floor: {
      async run() {
        await floorCall();
        await floorCall();
      },
    },
  };

  return {
    operations: { enter, position, admit, 'claim+consume': claimConsume },
    preparePosition,
    floorNote: 'claim+consume is two waitgate calls, so its floor is two sequential trivial EVALSHAs',
  };
}

/** Runs `variant` for up to `ms` with `concurrency` operations in flight. */
async function measure(variant, concurrency, ms, expectedOps, control, scriptsOnly = true) {
  const capacity = variant.prepare ? await variant.prepare(expectedOps, concurrency) : Infinity;
  const statsBefore = control ? await commandStats(control) : null;
  const latencies = new Latencies();
  let next = 0;
  let errors = 0;
  let lastError = null;
  const start = performance.now();
  const end = start + ms;
  const worker = async () => {
    while (next < capacity && performance.now() < end) {
      const i = next++;
      const t0 = performance.now();
      try {
        await variant.run(i);
      } catch (error) {
        errors++;
        lastError = error;
      }
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = performance.now() - start;
  // Redis' own view: commands a client sent per operation, and Redis time per operation
  // (the usec of those commands; a script's usec includes everything it ran).
  let redis = null;
  if (statsBefore) {
    const diff = diffStats(statsBefore, await commandStats(control));
    let sent = 0;
    let usec = 0;
    for (const [cmd, v] of Object.entries(diff)) {
      if (/^(info|slowlog|config|ping|client|select|hello)/.test(cmd)) continue;
      // A script variant: only EVAL/EVALSHA were sent (the commands run inside are in their usec).
      // The naive variant sends plain commands and no script.
      const isScript = /^eval/.test(cmd);
      if (scriptsOnly !== isScript) continue;
      sent += v.calls;
      usec += v.usec;
    }
    const n = Math.max(1, latencies.count);
    redis = { commandsPerOp: sent / n, redisUsecPerOp: usec / n };
  }
  await variant.cleanup?.();
  return { ops: latencies.count, elapsedMs: elapsed, opsPerSec: latencies.count / (elapsed / 1000), latencies, errors, lastError, redis };
}

/**
 * @returns {{ settings, results: { [op]: { [concurrency]: { variants, ratios } } } }}
 */
export async function runMicro({ url, rounds = 5, roundMs = 700, warmMs = 250, concurrencies = [1, 64], only = null, extraPackages = [], log = console.log }) {
  const options = { maxRetriesPerRequest: 1 };
  const wg = new Redis(url, options);
  const naive = new Redis(url, options);
  const floor = new Redis(url, options);
  const control = new Redis(url, options);
  const extraClients = extraPackages.map(() => new Redis(url, options));
  try {
    const floorSha = await control.script('LOAD', 'return 1');
    const { operations, preparePosition, floorNote } = defineOperations({ wg, naive, floor, control, floorSha });
    await preparePosition();
    // Other builds of waitgate (bench/ab.mjs): their waitgate variants join each operation.
    for (const [i, { label, pkg }] of extraPackages.entries()) {
      const extra = defineOperations({ wg: extraClients[i], naive, floor, control, floorSha, pkg, tag: `x${i}-` });
      await extra.preparePosition();
      for (const [op, variants] of Object.entries(extra.operations)) {
        for (const [name, variant] of Object.entries(variants)) if (name.startsWith('waitgate')) operations[op][name.replace('waitgate', label)] = variant;
      }
    }
    if (only) for (const op of Object.keys(operations)) if (!only.includes(op)) delete operations[op];

    const cells = [];
    for (const [op, variants] of Object.entries(operations)) {
      for (const concurrency of concurrencies) {
        for (const [name, variant] of Object.entries(variants)) cells.push({ op, concurrency, name, variant, rounds: [], rate: 2000 });
      }
    }
    const expected = (cell, ms) => Math.ceil((cell.rate * ms) / 1000 * 1.5) + 200;

    log(`  warming every path (${warmMs} ms each)...`);
    for (const cell of cells) {
      const r = await measure(cell.variant, cell.concurrency, warmMs, expected(cell, warmMs));
      cell.rate = Math.max(100, r.opsPerSec);
      if (r.errors) throw new Error(`${cell.op}/${cell.name}/c${cell.concurrency} failed while warming: ${r.lastError?.message}`);
    }

    for (let round = 0; round < rounds; round++) {
      log(`  round ${round + 1}/${rounds}`);
      const groups = new Map();
      for (const cell of cells) {
        const key = `${cell.op}|${cell.concurrency}`;
        if (!groups.has(key)) groups.set(key, []);
        groups.get(key).push(cell);
      }
      for (const group of groups.values()) {
        // Rotate the order of the variants from round to round.
        const order = group.map((_, i) => group[(i + round) % group.length]);
        for (const cell of order) {
          const r = await measure(cell.variant, cell.concurrency, roundMs, expected(cell, roundMs), cell.concurrency === 1 ? control : null, cell.name !== 'naive');
          cell.rate = Math.max(100, r.opsPerSec);
          cell.rounds.push(r);
        }
      }
    }

    const results = {};
    for (const cell of cells) {
      const byOp = (results[cell.op] ??= {});
      const byC = (byOp[cell.concurrency] ??= { variants: {}, ratios: {} });
      const all = new Latencies();
      for (const r of cell.rounds) all.merge(r.latencies);
      const lat = all.summary();
      byC.variants[cell.name] = {
        opsPerSec: round(median(cell.rounds.map((r) => r.opsPerSec)), 0),
        opsPerSecRounds: cell.rounds.map((r) => round(r.opsPerSec, 0)),
        p50Ms: round(lat.p50, 3),
        p99Ms: round(lat.p99, 3),
        ops: lat.count,
        redisCommandsPerOp: round(median(cell.rounds.filter((r) => r.redis).map((r) => r.redis.commandsPerOp)), 2),
        redisUsecPerOp: round(median(cell.rounds.filter((r) => r.redis).map((r) => r.redis.redisUsecPerOp)), 1),
        errors: cell.rounds.reduce((a, r) => a + r.errors, 0),
        lastError: cell.rounds.find((r) => r.lastError)?.lastError?.message ?? null,
      };
      cell.perRound = cell.rounds.map((r) => r.opsPerSec);
    }
    for (const [op, byC] of Object.entries(results)) {
      for (const c of Object.keys(byC)) {
        const get = (name) => cells.find((x) => x.op === op && String(x.concurrency) === c && x.name === name)?.perRound;
        const ratio = (a, b) => {
          const A = get(a);
          const B = get(b);
          return A && B ? round(median(A.map((v, i) => v / B[i])), 3) : null;
        };
        byC[c].ratios = {
          'waitgate/naive': ratio('waitgate', 'naive'),
          'waitgate/floor': ratio('waitgate', 'floor'),
          ...(get('shaped floor') ? { 'waitgate/shaped floor': ratio('waitgate', 'shaped floor'), 'shaped floor/floor': ratio('shaped floor', 'floor') } : {}),
          ...(get('waitgate positionCache') ? { 'waitgate positionCache/naive': ratio('waitgate positionCache', 'naive'), 'waitgate positionCache/floor': ratio('waitgate positionCache', 'floor') } : {}),
        };
        for (const { label } of extraPackages) {
          if (!get(label)) continue;
          byC[c].ratios[`${label}/naive`] = ratio(label, 'naive');
          byC[c].ratios[`${label}/floor`] = ratio(label, 'floor');
          byC[c].ratios[`${label}/waitgate`] = ratio(label, 'waitgate');
        }
      }
    }
    return {
      settings: { rounds, roundMs, warmMs, concurrencies, positionLine: POSITION_LINE, admitBatch: ADMIT_BATCH, floor: "EVALSHA of 'return 1' with no keys", note: floorNote },
      results,
    };
  } finally {
    await Promise.all([wg, naive, floor, control, ...extraClients].map((c) => c.quit().catch(() => c.disconnect())));
  }
}
