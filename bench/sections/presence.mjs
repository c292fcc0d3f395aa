// Presence at scale (abandonAfterSeconds, issue #11): what recording signs of life
// costs while a crowd polls with positionCache, at 100,000 and 1,000,000 waiting.
//
// Polls are simulated in process (no HTTP): K WaitingQueue instances (each its own
// ioredis client, positionCache on, abandonAfterSeconds 300), sticky routing (member i
// always polls through instance i % K), every instance running an admitter (50/s
// shared). Each member polls at the interval its last answer hinted (±20% jitter, like
// waitgate/client). Counted per measured window: polls, the store calls they caused
// (exact lookups, snapshots, touch calls: a wrapping store), the member ids sent in
// touch calls and those recorded (touchMembers' reply), Redis script calls (INFO
// commandstats) per poll, the size of the `seen` hash, and members dropped as abandoned
// (none should be: every member polls).
//
// The crowd at 1,000,000: one bench process cannot poll for a million members every
// 5 s (200,000 polls/s), so the polling tiers add a slow tier far from the head:
//   [<100: 1 s] [<1,000: 3 s] [<100,000: 5 s] [beyond: farTierSeconds, default 60 s]
// The same tiers at 100,000, where nobody is beyond rank 100,000 (so they are the
// defaults there). The presence head H = 2 × (burst + rate × abandonAfterSeconds) =
// 30,100 is far inside the 5 s tier either way: what presence costs depends on the
// members below H, who poll alike at both sizes. exactBelowRank is set to 1,000 (its
// default would be the largest belowRank, 100,000).
// Loading: the first 100,000 enter through the API (the enter script records the
// first H), the rest in bulk (bench/lib/bulk-enter.mjs); bulk-loaded members are then
// polled once exactly through their home instance, so that it knows them as it would
// have from their enter (the cache learns a member from an exact answer).
//
// At 100,000 the same crowd also polls through K instances with abandonAfterSeconds
// null (caches warmed the same way), in phases alternating with the measured ones:
// the calls per poll without presence, for comparison.

import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { RedisStore, WaitingQueue } from 'waitgate';
import { bulkEnter, forEachConcurrent, ids } from '../lib/bulk-enter.mjs';
import { commandStats, countCommands, diffStats } from '../lib/redis-info.mjs';
import { presenceHeadOf, seenKey } from '../lib/seen.mjs';
import { median, quantileSorted, round } from '../lib/stats.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const NAME = 'presence';
const JITTER = 0.2;
const TICK_MS = 20;
const SETTLE_MS = 1500; // after a phase switch: polls in flight and the old instances' last flush land outside the window
const API_ENTERS = 100_000;
const METHODS = [
  'enter',
  'position',
  'queueSnapshot',
  'touch',
  'admit',
  'leave',
  'stats',
  'claim',
  'consume',
  'release',
  'warnings',
  'controls',
  'setControls',
  'acceptCurrentState',
];

/** A Store that forwards to `inner` and counts calls by method, and for touch the ids sent, those recorded, and the latency. */
function recordingStore(inner) {
  const counts = Object.fromEntries(METHODS.map((m) => [m, 0]));
  const touch = { idsSent: 0, idsRecorded: 0, latencies: [] };
  const store = { counts, touchStats: touch };
  for (const m of METHODS) {
    if (typeof inner[m] !== 'function') continue;
    store[m] = (...args) => {
      counts[m]++;
      return inner[m](...args);
    };
  }
  store.touch = async (queue, request) => {
    counts.touch++;
    touch.idsSent += idsOf(request).length;
    const t = performance.now();
    const recorded = await inner.touch(queue, request);
    touch.latencies.push(performance.now() - t);
    touch.idsRecorded += recorded;
    return recorded;
  };
  store.snapshot = () => ({ ...counts, idsSent: touch.idsSent, idsRecorded: touch.idsRecorded, touchLatencies: touch.latencies.length });
  return store;
}

/** The ids of a touch request: `{ seen, pickedUp }` (or, in earlier builds, an array of ids). */
const idsOf = (request) => (Array.isArray(request) ? request : [...(request.seen ?? []), ...(request.pickedUp ?? [])]);
/** One touch call recording `ids` as seen, whichever form the built store takes. */
async function touchSeen(store, queue, ids) {
  try {
    return await store.touch(queue, { seen: ids, pickedUp: [] });
  } catch (error) {
    if (error instanceof TypeError) return store.touch(queue, ids);
    throw error;
  }
}

const sumOver = (snapshots, key) => snapshots.reduce((a, s) => a + (s[key] ?? 0), 0);

export async function runPresence({
  url,
  sizes = [100_000, 1_000_000],
  instances: K = 4,
  phaseSeconds = 20,
  baselineAt = [100_000],
  admitRatePerSecond = 50,
  abandonAfterSeconds = 300,
  farTierSeconds = 60,
  log = console.log,
}) {
  const clients = Array.from({ length: K }, () => new Redis(url, { maxRetriesPerRequest: 1 }));
  const control = new Redis(url, { maxRetriesPerRequest: 1 });
  const tiers = [{ belowRank: 100, seconds: 1 }, { belowRank: 1000, seconds: 3 }, { belowRank: 100_000, seconds: 5 }, { seconds: farTierSeconds }];
  const out = {
    settings: {
      sizes,
      instances: K,
      admitRatePerSecond,
      abandonAfterSeconds,
      pollingIntervals: tiers,
      exactBelowRank: 1000,
      jitter: JITTER,
      phaseSeconds,
      apiEnters: API_ENTERS,
      presenceFlushMs: 1000,
    },
    bySize: {},
  };
  try {
    for (const N of sizes) {
      out.bySize[N] = await runSize({
        N,
        K,
        clients,
        control,
        tiers,
        phaseSeconds,
        baseline: baselineAt.includes(N),
        admitRatePerSecond,
        abandonAfterSeconds,
        log,
      });
    }
    const [small, big] = [Math.min(...sizes), Math.max(...sizes)].map((n) => out.bySize[n]?.on);
    if (small && big && small !== big) {
      out.growth = {
        idsRecordedPerSecond: round(big.idsRecordedPerSecond / small.idsRecordedPerSecond, 3),
        touchCallsPerSecond: round(big.touchCallsPerSecond / small.touchCallsPerSecond, 3),
        note: `${big.members.toLocaleString('en-US')} / ${small.members.toLocaleString('en-US')} waiting`,
      };
      log(
        `  ${out.growth.note}: member ids recorded per second × ${out.growth.idsRecordedPerSecond}, touch calls per second × ${out.growth.touchCallsPerSecond}`,
      );
    }
    return out;
  } finally {
    await control.flushall().catch(() => undefined);
    await Promise.all([...clients, control].map((c) => c.quit().catch(() => c.disconnect())));
  }
}

async function runSize({ N, K, clients, control, tiers, phaseSeconds, baseline, admitRatePerSecond, abandonAfterSeconds, log }) {
  await control.flushall();
  const memberIds = ids('p', 0, N);
  const makeInstances = (abandon) => {
    const stores = clients.map((client) => recordingStore(new RedisStore({ client })));
    const queues = stores.map(
      (store) =>
        new WaitingQueue({
          store,
          name: NAME,
          admitRatePerSecond,
          abandonAfterSeconds: abandon,
          pollingIntervals: tiers,
          positionCache: { exactBelowRank: 1000, maxMembers: Math.ceil(N / K) + 10_000 },
          operationTimeoutMs: 10_000,
        }),
    );
    let abandoned = 0;
    const admittedIds = new Set();
    for (const q of queues) {
      q.on('abandoned', (list) => (abandoned += list.length));
      q.on('admitted', (list) => list.forEach((a) => admittedIds.add(a.memberId)));
      q.on('error', () => undefined);
    }
    return {
      stores,
      queues,
      abandon,
      get abandoned() {
        return abandoned;
      },
      admittedIds,
    };
  };
  const on = makeInstances(abandonAfterSeconds);
  const off = baseline ? makeInstances(null) : null;
  const presenceHead = presenceHeadOf(on.queues[0].config);
  const result = { members: N, presenceHead };

  // 1. Load: the first 100,000 through the API (sticky: member i through instance i % K), the rest in bulk,
  // then one exact poll each of the bulk members so that their instance knows them.
  const t0 = performance.now();
  const interval = new Float64Array(N);
  const apiN = Math.min(N, API_ENTERS);
  await forEachConcurrent(apiN, 256, async (i) => {
    interval[i] = (await on.queues[i % K].enter(memberIds[i])).pollingIntervalSeconds;
  });
  if (N > apiN) {
    await bulkEnter(control, NAME, memberIds.slice(apiN), { batch: 1000 });
    await forEachConcurrent(N - apiN, 256, async (j) => {
      const i = apiN + j;
      interval[i] = (await on.queues[i % K].position(memberIds[i])).pollingIntervalSeconds;
    });
  }
  if (off) await forEachConcurrent(N, 256, (i) => off.queues[i % K].position(memberIds[i]));
  result.loadSeconds = round((performance.now() - t0) / 1000, 1);
  result.seenAfterLoad = await control.hlen(seenKey(NAME));
  log(
    `  ${N.toLocaleString('en-US')} waiting: loaded in ${result.loadSeconds} s (${apiN.toLocaleString('en-US')} through the API), presence head ${presenceHead.toLocaleString('en-US')}, ${result.seenAfterLoad.toLocaleString('en-US')} seen entries`,
  );

  // 2. The crowd polls; phases on (abandonment on) and, with a baseline, off, alternating.
  const WAITING = 0;
  const READY = 1;
  const GONE = 2;
  const state = new Uint8Array(N);
  let current = on;
  let windowPolls = 0;
  let lostAnswers = 0;
  let pollErrors = 0;
  let readyAnswers = 0;
  const slots = new Map();
  let lastSlot = Math.floor(performance.now() / TICK_MS);
  const schedule = (i, at) => {
    const slot = Math.max(lastSlot, Math.floor(at / TICK_MS));
    let list = slots.get(slot);
    if (!list) slots.set(slot, (list = []));
    list.push(i);
  };
  const poll = async (i) => {
    if (state[i] !== WAITING) return;
    windowPolls++;
    let p;
    try {
      p = await current.queues[i % K].position(memberIds[i]);
    } catch {
      pollErrors++;
      schedule(i, performance.now() + 1000);
      return;
    }
    if (p.status === 'READY') {
      state[i] = READY;
      readyAnswers++;
      return;
    }
    if (p.status === 'NOT_ENTERED') {
      // A member who polls was dropped, or admitted and its token lapsed: not expected here.
      state[i] = GONE;
      lostAnswers++;
      return;
    }
    interval[i] = p.pollingIntervalSeconds;
    schedule(i, performance.now() + p.pollingIntervalSeconds * 1000 * (1 - JITTER + 2 * JITTER * Math.random()));
  };
  let running = true;
  let lagMax = 0;
  const ticker = (async () => {
    while (running) {
      const now = performance.now();
      const nowSlot = Math.floor(now / TICK_MS);
      // How far behind the polls run (the bench process is the limit when this grows).
      if (nowSlot - lastSlot > 1) lagMax = Math.max(lagMax, (nowSlot - lastSlot) * TICK_MS);
      for (let s = lastSlot; s <= nowSlot; s++) {
        const list = slots.get(s);
        if (!list) continue;
        slots.delete(s);
        for (const i of list) void poll(i);
      }
      lastSlot = nowSlot + 1;
      await sleep(TICK_MS / 2);
    }
  })();
  const start = performance.now();
  for (let i = 0; i < N; i++) schedule(i, start + Math.random() * interval[i] * 1000);

  const all = [on, off].filter(Boolean);
  const phases = off ? [on, off, on, off].map((v) => ({ v, seconds: phaseSeconds / 2 })) : [{ v: on, seconds: phaseSeconds }];
  const windows = { on: [], off: [] };
  const touchSeries = [];
  for (const { v, seconds } of phases) {
    current = v;
    const admitters = v.queues.map((q) => q.startAdmitter({ intervalMs: 1000 }));
    await sleep(SETTLE_MS);
    const statsBefore = await commandStats(control);
    const countsBefore = all.map((x) => x.stores.map((s) => s.snapshot()));
    windowPolls = 0;
    const w0 = performance.now();
    // Per second: touch calls and ids (the abandonment-on instances).
    let prev = on.stores.map((s) => s.snapshot());
    for (let t = 0; t < seconds; t++) {
      await sleep(1000);
      const now = on.stores.map((s) => s.snapshot());
      if (v === on) {
        touchSeries.push({
          size: N,
          touchCalls: sumOver(now, 'touch') - sumOver(prev, 'touch'),
          idsSent: sumOver(now, 'idsSent') - sumOver(prev, 'idsSent'),
          idsRecorded: sumOver(now, 'idsRecorded') - sumOver(prev, 'idsRecorded'),
        });
      }
      prev = now;
    }
    const polls = windowPolls;
    const secondsMeasured = (performance.now() - w0) / 1000;
    const statsAfter = await commandStats(control);
    const countsAfter = all.map((x) => x.stores.map((s) => s.snapshot()));
    await Promise.all(admitters.map((a) => a.stop()));
    // Calls of every instance in the window (the other set's trailing calls included, if any).
    const delta = (key) => all.reduce((a, x, xi) => a + sumOver(countsAfter[xi], key) - sumOver(countsBefore[xi], key), 0);
    const { scripts, all: allCommands } = countCommands(diffStats(statsBefore, statsAfter));
    const otherCalls = delta('admit') + delta('enter') + delta('leave') + delta('stats');
    windows[v === on ? 'on' : 'off'].push({
      seconds: secondsMeasured,
      polls,
      position: delta('position'),
      queueSnapshot: delta('queueSnapshot'),
      touch: delta('touch'),
      idsSent: delta('idsSent'),
      idsRecorded: delta('idsRecorded'),
      admit: delta('admit'),
      scripts,
      pollScripts: scripts - otherCalls,
      allCommands,
    });
  }
  running = false;
  await ticker;

  const summarize = (list, v) => {
    const s = (key) => list.reduce((a, w) => a + w[key], 0);
    const seconds = s('seconds');
    const polls = s('polls');
    return {
      members: N,
      seconds: round(seconds, 1),
      polls,
      pollsPerSecond: round(polls / seconds, 0),
      touchCalls: s('touch'),
      touchCallsPerSecond: round(s('touch') / seconds, 2),
      idsSentPerSecond: round(s('idsSent') / seconds, 0),
      idsRecordedPerSecond: round(s('idsRecorded') / seconds, 0),
      idsPerTouchCall: s('touch') ? round(s('idsSent') / s('touch'), 0) : null,
      exactLookups: s('position'),
      snapshots: s('queueSnapshot'),
      storeCallsPerPoll: round((s('position') + s('queueSnapshot') + s('touch')) / polls, 4),
      touchCallsPerPoll: round(s('touch') / polls, 5),
      // Redis' own count: EVAL/EVALSHA in the windows minus the admit/enter/leave/stats calls counted in process.
      redisScriptCallsPerPoll: round(s('pollScripts') / polls, 4),
      redisAllCommandsPerPoll: round(s('allCommands') / polls, 4),
      admitCalls: s('admit'),
      abandonAfterSeconds: v.abandon,
    };
  };
  result.on = summarize(windows.on, on);
  if (off) result.off = summarize(windows.off, off);
  const lat = on.stores.flatMap((s) => s.touchStats.latencies).sort((a, b) => a - b);
  result.on.touchLatencyMs = { p50: round(quantileSorted(lat, 0.5), 2), p99: round(quantileSorted(lat, 0.99), 2), max: round(lat[lat.length - 1], 2) };
  result.touchSeries = touchSeries;
  result.seenAtEnd = await control.hlen(seenKey(NAME));
  result.abandoned = on.abandoned + (off?.abandoned ?? 0);
  result.statsAbandoned = (await on.queues[0].stats()).abandoned;
  result.admitted = on.admittedIds.size + (off?.admittedIds.size ?? 0);
  result.readyAnswers = readyAnswers;
  result.lostAnswers = lostAnswers;
  result.pollErrors = pollErrors;
  result.pollLagMaxMs = lagMax;
  const o = result.on;
  log(
    `  ${N.toLocaleString('en-US')} waiting, abandonment on: ${o.polls.toLocaleString('en-US')} polls in ${o.seconds} s (${o.pollsPerSecond}/s); ${o.touchCallsPerSecond} touch calls/s (${o.idsPerTouchCall} ids each), ${o.idsRecordedPerSecond} member ids recorded/s; ${o.storeCallsPerPoll} store calls, ${o.redisScriptCallsPerPoll} Redis script calls per poll; touch p50 ${o.touchLatencyMs.p50} ms`,
  );
  if (result.off)
    log(
      `  ${N.toLocaleString('en-US')} waiting, abandonment off (interleaved phases): ${result.off.polls.toLocaleString('en-US')} polls (${result.off.pollsPerSecond}/s); ${result.off.storeCallsPerPoll} store calls, ${result.off.redisScriptCallsPerPoll} Redis script calls per poll`,
    );
  log(
    `  seen entries at the end ${result.seenAtEnd.toLocaleString('en-US')} (head ${presenceHead.toLocaleString('en-US')}); admitted ${result.admitted}, dropped as abandoned ${result.abandoned} (stats ${result.statsAbandoned}); NOT_ENTERED answers ${lostAnswers}; poll errors ${pollErrors}; ticker lag max ${lagMax} ms`,
  );

  // 3. Redis time of one touch call of 1,000 members near the head (SLOWLOG, median of 20).
  {
    const head = await control.zrange(`{waitgate:${NAME}}:waiting`, 0, 999);
    const store = new RedisStore({ client: clients[0] });
    await touchSeen(store, NAME, head); // loads the script
    await control.config('SET', 'slowlog-log-slower-than', '0');
    await control.config('SET', 'slowlog-max-len', '4096');
    const times = [];
    for (let i = 0; i < 20; i++) {
      await control.slowlog('RESET');
      await touchSeen(store, NAME, head);
      const entries = await control.slowlog('GET', 4096);
      const own = entries.find((e) => String(e[3]?.[0]).toLowerCase().startsWith('eval'));
      if (own) times.push(Number(own[2]));
    }
    await control.config('SET', 'slowlog-log-slower-than', '10000');
    result.touch1000RedisUs = { median: median(times), min: Math.min(...times), max: Math.max(...times), calls: times.length, members: head.length };
    result.presenceRedisUsPerSecond = round((result.touch1000RedisUs.median / 1000) * o.idsSentPerSecond, 0);
    log(
      `  one touch call of ${head.length} members: median ${result.touch1000RedisUs.median} us of Redis time; at ${o.idsSentPerSecond} ids/s that is about ${result.presenceRedisUsPerSecond} us of Redis time per second`,
    );
  }
  return result;
}
