// Per-operation micro benchmarks: waitgate vs the naive design vs one trivial EVALSHA,
// at concurrency 1 and 64, in interleaved short rounds (runMicro); and group commit
// (issue 14): enter, exact position and claim at concurrency 1 to 1,024, waitgate with
// group commit on (the default) and off against the same designs, with Redis CPU per
// operation from INFO cpu (runGroupCommit).

import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import * as waitgate from 'waitgate';
import { bulkEnter, bulkZadd, ids, queueKeys } from '../lib/bulk-enter.mjs';
import { commandStats, diffStats, redisProcessCpuUs } from '../lib/redis-info.mjs';
import { Latencies, median, round } from '../lib/stats.mjs';

const OPERATION_TIMEOUT_MS = 10_000; // generous: a loaded 2-core machine must not turn slow calls into errors
const POSITION_LINE = 10_000; // members waiting while `position` is measured
const ADMIT_BATCH = 50; // members per admit() call

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Admits until `n` members besides 'c-seed' hold a token (the queue's bucket: 10,000 per 10 ms); their admissions. */
async function admitMembers(queue, n) {
  const admitted = [];
  while (admitted.length < n) {
    for (const a of await queue.admit()) if (a.memberId !== 'c-seed') admitted.push(a);
    await sleep(11);
  }
  return admitted;
}
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
        claimable = await admitMembers(claimQueue, n);
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

/**
 * Runs `variant` for up to `ms` with `concurrency` operations in flight. With `control`,
 * Redis' INFO commandstats around the run; with `redisCpu` too, INFO cpu (the whole
 * redis-server process, user + sys) around it.
 */
async function measure(variant, concurrency, ms, expectedOps, control, scriptsOnly = true, { redisCpu = false } = {}) {
  const capacity = variant.prepare ? await variant.prepare(expectedOps, concurrency) : Infinity;
  const statsBefore = control ? await commandStats(control) : null;
  const cpuBefore = control && redisCpu ? await redisProcessCpuUs(control) : null;
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
  const cpuUs = cpuBefore === null ? null : (await redisProcessCpuUs(control)) - cpuBefore;
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
    redis = { commandsPerOp: sent / n, redisUsecPerOp: usec / n, ...(cpuUs === null ? {} : { cpuUsPerOp: cpuUs / n, cpuShare: cpuUs / 1000 / elapsed }) };
  }
  await variant.cleanup?.();
  return { ops: latencies.count, elapsedMs: elapsed, opsPerSec: latencies.count / (elapsed / 1000), latencies, errors, lastError, redis };
}

/** One cell per operation x concurrency x variant, each collecting its rounds. */
function cellsOf(operations, concurrencies) {
  const cells = [];
  for (const [op, variants] of Object.entries(operations)) {
    for (const concurrency of concurrencies) {
      for (const [name, variant] of Object.entries(variants)) cells.push({ op, concurrency, name, variant, rounds: [], rate: 2000 });
    }
  }
  return cells;
}

/** Operations a timed run of `ms` may need: the rate seen last time, +50%, +200. */
const expectedOps = (cell, ms) => Math.ceil(((cell.rate * ms) / 1000) * 1.5) + 200;

/**
 * Warms every cell once, then runs `rounds` rounds; within a round the variants of one
 * operation and concurrency run back to back, their order rotated from round to round,
 * so that a ratio of two variants compares runs made moments apart. Each cell keeps its
 * rounds' results (`cell.rounds`) and its last rate (to size the next run).
 */
async function measureRounds(cells, { warmMs, roundMs, rounds, log, run }) {
  log(`  warming every path (${warmMs} ms each, ${cells.length} cells)...`);
  for (const cell of cells) {
    const r = await run(cell, warmMs);
    cell.rate = Math.max(100, r.opsPerSec);
    if (r.errors) throw new Error(`${cell.op}/${cell.name}/c${cell.concurrency} failed while warming: ${r.lastError?.message}`);
  }
  const groups = new Map();
  for (const cell of cells) {
    const key = `${cell.op}|${cell.concurrency}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(cell);
  }
  for (let round = 0; round < rounds; round++) {
    log(`  round ${round + 1}/${rounds}`);
    for (const group of groups.values()) {
      const order = group.map((_, i) => group[(i + round) % group.length]);
      for (const cell of order) {
        const r = await run(cell, roundMs);
        cell.rate = Math.max(100, r.opsPerSec);
        cell.rounds.push(r);
      }
    }
  }
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

    const cells = cellsOf(operations, concurrencies);
    await measureRounds(cells, {
      warmMs,
      roundMs,
      rounds,
      log,
      run: (cell, ms) => measure(cell.variant, cell.concurrency, ms, expectedOps(cell, ms), cell.concurrency === 1 ? control : null, cell.name !== 'naive'),
    });

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

// ---------------------------------------------------------------------------------------
// Group commit (issue 14): enter, exact position and claim at concurrency 1 to 1,024.

/** Variants of the group-commit section, in the order of the report. */
export const GROUP_COMMIT_VARIANTS = ['waitgate', 'waitgate gc off', 'naive', 'floor', 'shaped floor'];

/**
 * A RedisStore with `groupCommit` set, or, on a build whose options schema does not
 * know `groupCommit` yet, a plain RedisStore (then the two waitgate variants run the
 * same code, and the report says so).
 */
function storeWith(pkg, client, groupCommit) {
  try {
    return { store: new pkg.RedisStore({ client, groupCommit }), supported: true };
  } catch (error) {
    if (/groupCommit/.test(String(error?.message)) || (pkg.WaitgateConfigError && error instanceof pkg.WaitgateConfigError)) {
      return { store: new pkg.RedisStore({ client }), supported: false };
    }
    throw error;
  }
}

function defineGroupCommitOperations({ wgOn, wgOff, naive, floor, control, floorSha, pkg = waitgate, tag = 'gc-' }) {
  const { WaitingQueue } = pkg;
  const on = storeWith(pkg, wgOn, true);
  const off = storeWith(pkg, wgOff, false);
  const stores = { waitgate: on.store, 'waitgate gc off': off.store };
  // Abandonment off, as in runMicro: the position line is bulk-loaded without signs of life.
  const queueOf = (store, name, extra = {}) => new WaitingQueue({ store, name, operationTimeoutMs: OPERATION_TIMEOUT_MS, abandonAfterSeconds: null, ...extra });
  const floorCall = () => floor.evalsha(floorSha, 0);
  // One waitgate call's shape (keys, the 16-character generation, the arguments of one member), doing nothing.
  const shapedFloorCall = (keyNames, ...args) => floor.evalsha(floorSha, keyNames.length, ...keyNames, 'a1b2c3d4e5f60718', ...args);
  let unique = 0;
  const fresh = (p) => `${tag}${p}${unique++}`;
  const keysOf = (name) => ({ ...queueKeys(name), seen: `{waitgate:${name}}:seen`, entries: `{waitgate:${name}}:entries`, identities: `{waitgate:${name}}:identities` });
  const unlinkKeys = async (keys) => {
    for (let i = 0; i < keys.length; i += 1000) await control.unlink(...keys.slice(i, i + 1000));
  };
  const unlinkQueue = async (name) => {
    const pattern = `{waitgate:${name.replace(/[[\]{}*?\\]/g, '\\$&')}}:*`;
    let cursor = '0';
    do {
      const [next, keys] = await control.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await control.unlink(...keys);
    } while (cursor !== '0');
  };

  // ---------- enter: a new member joins (each waitgate variant its own queue)
  const enterVariant = (label) => {
    const queue = queueOf(stores[label], `${tag}enter-${label === 'waitgate' ? 'on' : 'off'}`);
    return {
      async run() {
        const p = await queue.enter(fresh('e'));
        if (p.status !== 'WAITING') throw new Error(`enter answered ${p.status}`);
      },
    };
  };
  const enterKeys = keysOf(`${tag}enter-on`);
  const enter = {
    waitgate: enterVariant('waitgate'),
    'waitgate gc off': enterVariant('waitgate gc off'),
    naive: {
      async run() {
        const id = fresh('e');
        if ((await naive.zscore(`naive:${tag}enter:waiting`, id)) === null) await naive.zadd(`naive:${tag}enter:waiting`, Date.now(), id);
      },
    },
    floor: { run: floorCall },
    'shaped floor': {
      // enterIfAbsent's 10 keys; member id, deadline, no token, no TTL, no presence head.
      keys: [enterKeys.waiting, enterKeys.tokens, enterKeys.active, enterKeys.leases, enterKeys.meta, enterKeys.seen, enterKeys.entries, enterKeys.identities, enterKeys.lanes, enterKeys.codes],
      run() {
        return shapedFloorCall(this.keys, fresh('e'), Date.now() + OPERATION_TIMEOUT_MS, '', '', '');
      },
    },
  };

  // ---------- position, exact path (no positionCache): a waiting member polls (10,000 waiting)
  const positionIds = ids('gp', 0, POSITION_LINE);
  const positionName = `${tag}position`;
  const pick = () => positionIds[(Math.random() * POSITION_LINE) | 0];
  const positionVariant = (label) => {
    const queue = queueOf(stores[label], positionName);
    return {
      queue,
      async run() {
        const p = await queue.position(pick());
        if (p.status !== 'WAITING') throw new Error(`position answered ${p.status}`);
      },
    };
  };
  const positionKeys = keysOf(positionName);
  const position = {
    waitgate: positionVariant('waitgate'),
    'waitgate gc off': positionVariant('waitgate gc off'),
    naive: {
      async run() {
        const id = pick();
        const token = await naive.get(`naive:token:${id}`);
        if (token !== null) return;
        const rank = await naive.zrank(`naive:${tag}position:waiting`, id);
        await naive.zcard(`naive:${tag}position:waiting`);
        if (rank === null) throw new Error('not waiting');
      },
    },
    floor: { run: floorCall },
    'shaped floor': {
      keys: [positionKeys.waiting, positionKeys.tokens, positionKeys.meta],
      run() {
        return shapedFloorCall(this.keys, pick());
      },
    },
  };
  const prepare = async () => {
    await position.waitgate.queue.enter('gp-seed');
    await bulkEnter(control, positionName, positionIds);
    await bulkZadd(control, `naive:${tag}position:waiting`, positionIds);
    // Both stores learn the queue's generation before they are timed.
    await position['waitgate gc off'].queue.position('gp-seed');
  };

  // ---------- claim: an order request claims its token (READY -> CLAIMED under a lease).
  // Tokens for up to n claims are issued before each timed run (untimed), on a fresh queue.
  const claimVariant = (label) => {
    let queue = null;
    let name = '';
    let claimable = [];
    return {
      async prepare(n) {
        name = fresh(`claim-${label === 'waitgate' ? 'on' : 'off'}-`);
        queue = queueOf(stores[label], name, { admitRatePerSecond: 1_000_000, admitBurst: 10_000 });
        await queue.enter('c-seed');
        await bulkEnter(control, name, ids('c-', 0, n), { batch: 2000 });
        claimable = await admitMembers(queue, n);
        return claimable.length;
      },
      async run(i) {
        const { memberId, entryToken } = claimable[i];
        const claim = await queue.claim(memberId, entryToken);
        if (!claim.claimId) throw new Error('claim answered no claim id');
      },
      cleanup: () => unlinkQueue(name),
    };
  };
  const claimShapeKeys = keysOf(`${tag}claim-shape`);
  const claimShape = { token: newToken(), claimId: randomBytes(16).toString('base64url') };
  const claim = {
    waitgate: claimVariant('waitgate'),
    'waitgate gc off': claimVariant('waitgate gc off'),
    naive: {
      members: [],
      async prepare(n) {
        this.members = ids(fresh('nc-'), 0, n).map((id) => ({ key: `naive:token:${id}`, lease: `naive:lease:${id}`, token: newToken() }));
        for (let i = 0; i < n; i += 1000) {
          const pipeline = control.pipeline();
          for (const m of this.members.slice(i, i + 1000)) pipeline.set(m.key, m.token, 'EX', 300);
          await pipeline.exec();
        }
        return n;
      },
      // GET the token, compare, SET a lease NX with a TTL: what a hand-made claim needs at least.
      async run(i) {
        const m = this.members[i];
        const stored = await naive.get(m.key);
        if (stored !== m.token) throw new Error('naive token mismatch');
        if ((await naive.set(m.lease, claimShape.claimId, 'PX', 30_000, 'NX')) !== 'OK') throw new Error('naive lease taken');
      },
      async cleanup() {
        await unlinkKeys(this.members.flatMap((m) => [m.key, m.lease]));
      },
    },
    floor: { run: floorCall },
    'shaped floor': {
      // claimToken's 4 keys; member id, token, claim id, lease.
      keys: [claimShapeKeys.tokens, claimShapeKeys.active, claimShapeKeys.leases, claimShapeKeys.meta],
      run() {
        return shapedFloorCall(this.keys, fresh('c'), claimShape.token, claimShape.claimId, 30_000);
      },
    },
  };

  return { operations: { enter, position, claim }, prepare, groupCommitOption: on.supported && off.supported };
}

/**
 * Group commit in one run: every operation x concurrency x variant, interleaved rounds
 * (variants rotated from round to round), Redis CPU per operation from INFO cpu deltas
 * and script calls per operation from INFO commandstats in every cell.
 * @returns {{ settings, results: { [op]: { [concurrency]: { variants, ratios } } } }}
 */
export async function runGroupCommit({ url, rounds = 5, roundMs = 700, warmMs = 250, concurrencies = [1, 64, 256, 1024], only = null, log = console.log }) {
  const options = { maxRetriesPerRequest: 1 };
  const clients = { wgOn: new Redis(url, options), wgOff: new Redis(url, options), naive: new Redis(url, options), floor: new Redis(url, options), control: new Redis(url, options) };
  try {
    const floorSha = await clients.control.script('LOAD', 'return 1');
    const { operations, prepare, groupCommitOption } = defineGroupCommitOperations({ ...clients, floorSha });
    if (!groupCommitOption) log('  NOTE: this build of waitgate has no `groupCommit` option: "waitgate" and "waitgate gc off" run the same code');
    await prepare();
    if (only) for (const op of Object.keys(operations)) if (!only.includes(op)) delete operations[op];

    const cells = cellsOf(operations, concurrencies);
    await measureRounds(cells, {
      warmMs,
      roundMs,
      rounds,
      log,
      run: async (cell, ms) => {
        const r = await measure(cell.variant, cell.concurrency, ms, expectedOps(cell, ms), clients.control, cell.name !== 'naive', { redisCpu: true });
        r.p50Ms = r.latencies.summary().p50;
        return r;
      },
    });

    const results = {};
    for (const cell of cells) {
      const byC = ((results[cell.op] ??= {})[cell.concurrency] ??= { variants: {}, ratios: {} });
      const all = new Latencies();
      for (const r of cell.rounds) all.merge(r.latencies);
      const lat = all.summary();
      const redisRounds = cell.rounds.filter((r) => r.redis);
      byC.variants[cell.name] = {
        opsPerSec: round(median(cell.rounds.map((r) => r.opsPerSec)), 0),
        opsPerSecRounds: cell.rounds.map((r) => round(r.opsPerSec, 0)),
        p50Ms: round(lat.p50, 3),
        p99Ms: round(lat.p99, 3),
        ops: lat.count,
        // EVALSHA calls per operation (naive: plain commands per operation): below 1 when calls share a script call.
        redisCallsPerOp: round(median(redisRounds.map((r) => r.redis.commandsPerOp)), 3),
        redisCpuUsPerOp: round(median(redisRounds.map((r) => r.redis.cpuUsPerOp)), 2),
        redisCpuShare: round(median(redisRounds.map((r) => r.redis.cpuShare)), 3),
        errors: cell.rounds.reduce((a, r) => a + r.errors, 0),
        lastError: cell.rounds.find((r) => r.lastError)?.lastError?.message ?? null,
      };
      cell.perRound = cell.rounds.map((r) => r.opsPerSec);
      cell.p50PerRound = cell.rounds.map((r) => r.p50Ms);
    }
    for (const [op, byC] of Object.entries(results)) {
      for (const c of Object.keys(byC)) {
        const find = (name) => cells.find((x) => x.op === op && String(x.concurrency) === c && x.name === name);
        const ratio = (a, b, field = 'perRound') => {
          const A = find(a)?.[field];
          const B = find(b)?.[field];
          return A && B ? round(median(A.map((v, i) => v / B[i])), 3) : null;
        };
        byC[c].ratios = {
          'waitgate/floor': ratio('waitgate', 'floor'),
          'waitgate/shaped floor': ratio('waitgate', 'shaped floor'),
          'waitgate/naive': ratio('waitgate', 'naive'),
          'waitgate gc off/floor': ratio('waitgate gc off', 'floor'),
          'waitgate/waitgate gc off': ratio('waitgate', 'waitgate gc off'),
          // Latency, not throughput: the median of per-round p50 ratios (<= 1.1 at c1 is the target for enter).
          'p50 waitgate/waitgate gc off': ratio('waitgate', 'waitgate gc off', 'p50PerRound'),
        };
      }
    }
    return {
      settings: {
        rounds,
        roundMs,
        warmMs,
        concurrencies,
        variants: GROUP_COMMIT_VARIANTS,
        groupCommitOption,
        positionLine: POSITION_LINE,
        floor: "EVALSHA of 'return 1' with no keys",
        shapedFloor: "EVALSHA of 'return 1' with the keys and arguments of one member's waitgate call (enterIfAbsent: 10 keys; position: 4; claimToken: 4)",
        naive: 'enter: ZSCORE + ZADD; position: GET token + ZRANK + ZCARD; claim: GET token + SET lease PX NX',
        redisCpu: 'INFO cpu used_cpu_user + used_cpu_sys of redis-server, delta over each timed run / operations',
      },
      results,
    };
  } finally {
    await Promise.all(Object.values(clients).map((c) => c.quit().catch(() => c.disconnect())));
  }
}
