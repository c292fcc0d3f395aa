#!/usr/bin/env node
// npm run simulate: flash crowds on the example shop over real HTTP, bounded.
//
//   redis-server (spawned here) <- shop process (examples/express-shop createShop, RedisStore)
//                                 <- shoppers process (HTTP load)
//
// Default: the flash crowd (20,000 shoppers in 5 s, maxActive 800), abandonment on
// (abandonAfterSeconds 30, no pick-up timeout: tokens last 20 s; 5% of the shoppers stop polling without
// a word) and a rate change mid-sale: 150/s, then setControls({ admitRatePerSecond: 300 })
// at 30 s. Waiting, READY, CLAIMED, admissions/s, orders/s, order transactions in flight,
// poll latency p50/p99, Redis commands/s per second, and estimate honesty (SPEC §14: each
// admitted member's estimatedWaitSeconds at entry and at half its wait vs the wait it then
// had, bench/sim/estimates.mjs); writes docs/images/perf-sim-*.svg and
// bench/results/simulate-latest.json. About 2 minutes.
// SIM_RATE_AFTER, SIM_RATE_CHANGE_AT ('null': no change), SIM_SILENT (share that stops polling),
// SIM_SUFFIX (a variant: its own result file and estimate charts, the default run's kept).
//
// --short: the same on 500 shoppers in 2 s, 15/s then 30/s at 10 s (about 30 s; run by
// test/bench/simulate-short.test.ts); writes only the result JSON, to SIM_OUT or
// <tmpdir>/waitgate-simulate-short.json; no charts.
//
// --abandonment: abandoning shoppers (issue #11), two runs side by side, in parallel,
// each on its own redis-server, shop and crowd, the same seeded crowd in both:
//   on:  abandonAfterSeconds 15, holdSilentAfterSeconds 4 (hold at the head), pickupTimeoutSeconds 20
//   off: abandonAfterSeconds null, no hold, no pick-up timeout (the behaviour before #11)
// 4,000 shoppers in 5 s, rate 50/s, maxActive 200, tokens for 60 s; 30% of the shoppers
// stop polling at a random moment of the wait they were shown, and 10% of those admitted
// while still polling never come back (they never read their token). Reports the share
// of admissions that went to live shoppers, orders per minute, the wait of the last live
// shopper; writes docs/images/perf-sim-abandonment-*.svg and
// bench/results/simulate-abandonment-latest.json. About 2 minutes 10 s.
// SIM_ABANDON_AFTER, SIM_HOLD_SILENT ('null': no hold), SIM_PICKUP_TIMEOUT (the on run), SIM_SEED; SIM_SHOPPERS, SIM_RATE,
// SIM_MAX_ACTIVE, SIM_MAX_SECONDS apply to either mode.
//
// --always-on [--short]: the safety net at quiet load and stock under a flash crowd
// (bench/sim/always-on.mjs): p99 enter -> READY, units oversold, admissions after the closing.
//
//   npm run build && npm run simulate
//   npm run simulate -- --abandonment
//   SIM_SHOPPERS=5000 npm run simulate      (smaller crowd)

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { redisServerVersion, startBenchRedisServer } from '../scripts/redis-server.mjs';
import { forkChild, messageOf } from './lib/ipc.mjs';
import { commandStats, countCommands } from './lib/redis-info.mjs';
import { createProgress } from './lib/progress.mjs';
import { lineChart } from './lib/svg-chart.mjs';
import { honestyCharts, honestyOf } from './sim/estimates.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const args = process.argv.slice(2);
const classic = !args.includes('--abandonment');
const short = classic && args.includes('--short');
const env = (name, fallback) => (process.env[name] ? Number(process.env[name]) : fallback);
// SIM_SUFFIX=x: a variant's files beside the default run's: simulate-x-latest.json, perf-sim-estimates-x.svg.
const suffix = process.env.SIM_SUFFIX ?? '';
if (!/^[a-z0-9-]*$/.test(suffix)) throw new Error(`SIM_SUFFIX: lowercase letters, digits and - only, not ${JSON.stringify(suffix)}`);
const suffixed = (file) =>
  suffix ? file.replace(/(-latest)?\.(json|svg)$/, (_, latest = '', ext) => (latest ? `-${suffix}${latest}.${ext}` : `-${suffix}.${ext}`)) : file;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const fullRun = {
  shoppers: 20_000,
  arrivalSeconds: 5,
  maxSeconds: 120,
  admitRatePerSecond: 150,
  rateChange: { atSeconds: 30, admitRatePerSecond: 300 },
  maxActive: 800,
  sockets: 256,
};
const shortRun = {
  shoppers: 500,
  arrivalSeconds: 2,
  maxSeconds: 45,
  admitRatePerSecond: 15,
  rateChange: { atSeconds: 10, admitRatePerSecond: 30 },
  maxActive: 80,
  sockets: 64,
};
const size = short ? shortRun : fullRun;
const classicConfig = {
  shoppers: env('SIM_SHOPPERS', size.shoppers),
  arrivalSeconds: env('SIM_ARRIVAL_SECONDS', size.arrivalSeconds),
  maxSeconds: env('SIM_MAX_SECONDS', size.maxSeconds), // the shoppers stop by themselves at the latest then
  // The queue (shop process).
  admitRatePerSecond: env('SIM_RATE', size.admitRatePerSecond),
  // A rate change mid-sale (setControls), for estimate honesty.
  rateChange:
    process.env.SIM_RATE_CHANGE_AT === 'null'
      ? null
      : { atSeconds: env('SIM_RATE_CHANGE_AT', size.rateChange.atSeconds), admitRatePerSecond: env('SIM_RATE_AFTER', size.rateChange.admitRatePerSecond) },
  maxActive: env('SIM_MAX_ACTIVE', size.maxActive),
  admitIntervalMs: 250,
  entryTokenTtlSeconds: 20,
  claimTtlSeconds: 15,
  positionCache: true,
  stock: 1_000_000,
  // Abandonment on: the default tiers (5 s at most, +20% jitter) allow abandonAfterSeconds down
  // to 2 x 5 x 1.2 + 2 = 14 s; 30 s leaves room for polls slowed down by a loaded machine
  // (20 s dropped live shoppers when poll p50 reached 10 s on a shared 2-core machine).
  abandonAfterSeconds: 30,
  pickupTimeoutSeconds: null, // the tokens' TTL (20 s) is shorter than any pick-up timeout allowed here (>= 14 s) would add
  holdSilentAfterSeconds: null,
  // The shoppers.
  jitter: 0.2,
  sockets: size.sockets,
  abandonWaiting: 0.08, // give up while waiting after their patience runs out (DELETE /queue)
  patienceSeconds: [5, 40],
  leaveWhenReady: 0.02, // READY, then change their mind (DELETE /queue)
  vanishWhenReady: 0.01, // READY, then close the tab: the token expires unused
  thinkSeconds: [0.2, 1.0], // READY -> order
  silentWaiting: env('SIM_SILENT', 0.05), // stop polling at a random moment of the wait they were shown, without a word
  goneAtAdmission: 0,
};

const abandonmentConfig = {
  shoppers: env('SIM_SHOPPERS', 4000),
  arrivalSeconds: env('SIM_ARRIVAL_SECONDS', 5),
  maxSeconds: env('SIM_MAX_SECONDS', 120),
  admitRatePerSecond: env('SIM_RATE', 50),
  maxActive: env('SIM_MAX_ACTIVE', 200),
  admitIntervalMs: 250,
  entryTokenTtlSeconds: 60,
  claimTtlSeconds: 15,
  positionCache: true,
  stock: 1_000_000,
  // Tiers scaled to the rate (rank < 2 s of admissions polls every second): abandonAfterSeconds
  // may then go down to 2 × 4 s × 1.2 + 2 = 11.6 s; holdSilentAfterSeconds to 3.9 s (a member
  // told 2 s at rank 100 can reach the head before its next poll: 2 × 1.2 + 1 s flush + 0.5 s).
  // may then go down to 2 × 4 s × 1.2 + 2 = 11.6 s.
  pollingIntervals: [{ belowRank: 100, seconds: 1 }, { belowRank: 500, seconds: 2 }, { seconds: 4 }],
  jitter: 0.2,
  sockets: 128,
  silentWaiting: 0.3, // stop polling at a random moment of the wait they were shown, without a word
  goneAtAdmission: 0.1, // admitted while polling, never come back: never read the token
  abandonWaiting: 0,
  patienceSeconds: [5, 40],
  leaveWhenReady: 0,
  vanishWhenReady: 0,
  thinkSeconds: [0.2, 1.0],
  seed: env('SIM_SEED', 11),
};
const VARIANTS = {
  on: {
    abandonAfterSeconds: env('SIM_ABANDON_AFTER', 15),
    // Hold at the head: the 3.9 s floor of these tiers, rounded up (see the tiers above).
    holdSilentAfterSeconds: process.env.SIM_HOLD_SILENT === 'null' ? null : env('SIM_HOLD_SILENT', 4),
    pickupTimeoutSeconds: env('SIM_PICKUP_TIMEOUT', 20),
  },
  off: { abandonAfterSeconds: null, holdSilentAfterSeconds: null, pickupTimeoutSeconds: null },
};

const started = performance.now();
// A progress line per step (a bar redrawn on a terminal, under the output): bench/lib/progress.mjs.
const progress = createProgress({ steps: ['start', 'crowd', 'report'] });
const log = (...parts) => progress.log(parts.join(' '));
const redisVersion = redisServerVersion();
const children = [];
const servers = [];
const monitors = [];
const killChildren = () => children.forEach((c) => c.exitCode === null && c.kill('SIGKILL'));
process.once('exit', killChildren);
const maxSeconds = classic ? classicConfig.maxSeconds : abandonmentConfig.maxSeconds;
const hardStop = setTimeout(
  () => {
    console.error('simulate: hard time limit reached, stopping');
    killChildren();
    process.exit(1);
  },
  (maxSeconds + 60) * 1000,
);
hardStop.unref();

const once = messageOf;

/** A redis-server and the shop on it, listening. */
async function prepare(label, config) {
  const redis = await startBenchRedisServer();
  servers.push(redis);
  const monitor = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  monitors.push(monitor);
  const shop = forkChild(join(here, 'sim', 'shop.mjs'), { REDIS_URL: redis.url, SIM_CONFIG: JSON.stringify(config) }, children);
  const { port } = await once(shop, 'ready');
  const shoppers = forkChild(join(here, 'sim', 'shoppers.mjs'), { SHOP_PORT: String(port), SIM_CONFIG: JSON.stringify(config), SIM_T0: '0' }, children);
  // The shop's admissions go on to the crowd (a shopper who never comes back goes at its admission).
  shop.on('message', (m) => m.type === 'admitted' && shoppers.connected && shoppers.send(m));
  return { label, config, redis, monitor, shop, shoppers };
}

/** Runs one prepared crowd from t0 until the shoppers are done; Redis' counters every second. */
async function run(v, t0) {
  const { shop, shoppers, monitor, label } = v;
  await sleep(Math.max(0, t0 - Date.now()));
  shop.send({ type: 'start', t0 });
  const shoppersDone = once(shoppers, 'result');
  shoppers.send({ type: 'go', t0 });
  const change = v.config.rateChange;
  const rateChange = change
    ? setTimeout(() => shop.send({ type: 'controls', patch: { admitRatePerSecond: change.admitRatePerSecond } }), t0 + change.atSeconds * 1000 - Date.now())
    : null;
  const redisSeries = [];
  let previous = { at: Date.now(), stats: await commandStats(monitor) };
  let done = false;
  const sampler = (async () => {
    while (!done) {
      await sleep(1000);
      const at = Date.now();
      const stats = await commandStats(monitor);
      const diff = {};
      for (const [cmd, val] of Object.entries(stats)) diff[cmd] = { calls: val.calls - (previous.stats[cmd]?.calls ?? 0) };
      const { scripts, all } = countCommands(diff);
      const seconds = (at - previous.at) / 1000;
      redisSeries.push({ t: (at - t0) / 1000, scriptCallsPerSecond: Math.round(scripts / seconds), commandsPerSecond: Math.round(all / seconds) });
      previous = { at, stats };
      const t = Math.round((at - t0) / 1000);
      if (t % 10 === 0)
        log(`  ${label ? `[${label}] ` : ''}t=${t} s: Redis ${Math.round(all / seconds)} commands/s (${Math.round(scripts / seconds)} script calls/s)`);
    }
  })();
  const load = await shoppersDone;
  clearTimeout(rateChange);
  done = true;
  await sampler;
  const shopDone = once(shop, 'result');
  shop.send({ type: 'stop' });
  const shopResult = await shopDone;
  return { load, shopResult, redisSeries, t0 };
}

/** The checks of every run: FIFO, members lost, the bucket's bound; and the per-second series. */
function checksOf(config, { load, shopResult, redisSeries, t0 }) {
  const s = load.outcome;
  const admittedIndex = new Map(shopResult.admittedOrder.map((id, i) => [id, i]));
  // FIFO, part 3 (the shoppers' view): if A's enter finished before B's began, and both were
  // admitted, A was admitted first; and B cannot have been admitted while A still waits.
  const enters = load.enters.filter(([, start]) => start > 0).map(([id, start, end, state]) => ({ id, start, end, state, idx: admittedIndex.get(id) }));
  const byEnd = [...enters].sort((a, b) => a.end - b.end);
  const byStart = [...enters].sort((a, b) => a.start - b.start);
  const stillWaiting = new Set(shopResult.stillWaiting);
  let happensBeforeViolations = 0;
  let maxIdxBefore = -1;
  let waitingBefore = false;
  let j = 0;
  for (const b of byStart) {
    while (j < byEnd.length && byEnd[j].end < b.start) {
      const a = byEnd[j++];
      if (a.idx !== undefined) maxIdxBefore = Math.max(maxIdxBefore, a.idx);
      else if (stillWaiting.has(a.id)) waitingBefore = true;
    }
    if (b.idx !== undefined && (maxIdxBefore > b.idx || waitingBefore)) happensBeforeViolations++;
  }
  // Lost: a shopper who did not leave yet was told NOT_ENTERED, or ended neither ordered, gone, nor still in the queue.
  const accounted =
    s.ordered +
    s.abandonedWaiting +
    s.leftWhenReady +
    s.vanishedWhenReady +
    s.stillWaitingAtEnd +
    s.orderFailed +
    (s.stoppedPolling ?? 0) +
    (s.goneAtAdmission ?? 0) +
    (s.goneAfterReadingReady ?? 0);
  // (A shopper told NOT_ENTERED is in none of the outcomes: counted once, by the difference.)
  const membersLost = config.shoppers - accounted - s.unfinished;

  const series = shopResult.series.map((row) => {
    const t = Math.round(row.t);
    const http = load.series[t - 1] ?? load.series[t] ?? {};
    const r = redisSeries.find((x) => Math.round(x.t) === t) ?? {};
    return {
      ...row,
      t,
      polls: http.polls ?? 0,
      pollP50Ms: http.pollP50Ms ?? null,
      pollP99Ms: http.pollP99Ms ?? null,
      orderP99Ms: http.orderP99Ms ?? null,
      httpInFlightMax: http.httpInFlightMax ?? null,
      loadgenCpuPercent: http.loadgenCpuPercent ?? null,
      loadgenLagMaxMs: http.loadgenLagMaxMs ?? null,
      agentQueuedMax: http.agentQueuedMax ?? null,
      redisCommandsPerSecond: r.commandsPerSecond ?? null,
      redisScriptCallsPerSecond: r.scriptCallsPerSecond ?? null,
    };
  });
  const busy = series.filter((row) => row.waiting > 0 && row.t >= 2);
  const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
  const maxOf = (key) => Math.max(...series.map((r) => r[key] ?? 0));
  const totalPolls = load.pollLatencyMs.count;
  const totalScriptCalls = redisSeries.reduce((a, r) => a + r.scriptCallsPerSecond, 0);
  const calls = shopResult.storeCalls;
  // The token bucket's promise: over any window of whole seconds, admissions <= rate x window + burst
  // (+ one second of rate for the bins' edges).
  // With a rate change mid-sale the bound is taken at the higher of the two rates (burst follows the rate).
  const peakRate = Math.max(config.admitRatePerSecond, config.rateChange?.admitRatePerSecond ?? 0);
  let bucketExcess = -Infinity;
  const adm = series.map((r) => r.admissionsPerSecond);
  for (let i = 0; i < adm.length; i++) {
    let sum = 0;
    for (let k = i; k < adm.length; k++) {
      sum += adm[k];
      bucketExcess = Math.max(bucketExcess, sum - peakRate * (k - i + 2) - peakRate);
    }
  }
  const summary = {
    shoppers: config.shoppers,
    durationSeconds: Math.round(load.seconds),
    outcome: s,
    maxOrderTransactionsInFlight: shopResult.maxOrdersInFlight,
    maxDbTransactionsInFlight: shopResult.maxDbTransactionsInFlight,
    maxActiveSampled: maxOf('active'),
    maxActive: config.maxActive,
    admissionsPerSecondWhileWaiting: {
      mean: Math.round(mean(busy.map((r) => r.admissionsPerSecond)) ?? 0),
      max: Math.max(0, ...busy.map((r) => r.admissionsPerSecond)),
      configured: config.admitRatePerSecond,
      burst: config.admitRatePerSecond,
      ...(config.rateChange ? { after: { atSeconds: config.rateChange.atSeconds, configured: config.rateChange.admitRatePerSecond } } : {}),
    },
    rateChanges: (shopResult.controlChanges ?? []).map(({ at, ...c }) => ({ atSeconds: Number(((at - t0) / 1000).toFixed(2)), ...c })),
    estimateHonesty: honestyOf(load.estimates, {
      rateChange: config.rateChange ?? null,
      rateChangedAt: shopResult.controlChanges?.find((c) => !c.error)?.at ?? null,
    }),
    secondsAtMaxActive: series.filter((r) => r.active !== null && r.active >= config.maxActive - 1).length,
    orders: shopResult.orders,
    ordersInDb: shopResult.ordersInDb,
    duplicateTokenOrders: shopResult.duplicateTokenOrders,
    membersLost,
    notEnteredWhileWaiting: load.lost.notEnteredWhileWaiting,
    fifoViolations: shopResult.fifo.outOfOrderAdmissions + shopResult.fifo.skippedStillWaiting + happensBeforeViolations,
    fifo: { ...fifoWithoutDelays(shopResult.fifo), happensBeforeViolations, admitted: shopResult.admittedOrder.length },
    pollLatencyMs: load.pollLatencyMs,
    maxPollP99Ms: Math.max(...series.map((r) => r.pollP99Ms ?? 0)),
    polls: totalPolls,
    storeCalls: calls,
    pollStoreCallsPerPoll: totalPolls ? Number((((calls.position ?? 0) + (calls.queueSnapshot ?? 0) + (calls.touch ?? 0)) / totalPolls).toFixed(4)) : null,
    redisScriptCallsPerPoll: totalPolls ? Number((totalScriptCalls / totalPolls).toFixed(4)) : null,
    admissionsOverBucketBound: Math.max(0, bucketExcess),
    maxRedisCommandsPerSecond: maxOf('redisCommandsPerSecond'),
    maxRedisScriptCallsPerSecond: maxOf('redisScriptCallsPerSecond'),
    maxPollsPerSecond: maxOf('polls'),
    httpErrorsByStatus: load.errorsByStatus,
    queueErrors: shopResult.queueErrors,
    stoppedByDeadline: load.stoppedByDeadline,
    final: shopResult.final,
  };
  return { summary, series };
}

/** The FIFO figures without the list of delays (summarised as overtaken: count, p50, max, seconds). */
function fifoWithoutDelays({ overtaken = [], ...fifo }) {
  const sorted = overtaken.map(([, ms]) => ms).sort((a, b) => a - b);
  const seconds = (ms) => (ms === undefined ? null : Number((ms / 1000).toFixed(1)));
  return { ...fifo, overtaken: { count: sorted.length, p50Seconds: seconds(sorted[Math.floor(sorted.length / 2)]), maxSeconds: seconds(sorted.at(-1)) } };
}

/**
 * The abandonment figures of one run: who the admissions went to (live: still polling
 * when admitted), orders per minute, the last live shopper's wait, members dropped.
 */
function abandonmentFiguresOf(config, { load, shopResult }, { series }, t0) {
  const A = config.abandonAfterSeconds ?? null;
  const byId = new Map(load.shoppers.map((s) => [s.id, s]));
  const admissions = shopResult.admittedOrder.map((id, i) => ({ id, at: shopResult.admittedAt[i], s: byId.get(id) }));
  const deadAt = (s, at) => s && s.stoppedAt !== null && s.stoppedAt <= at;
  let live = 0;
  let goneAtAdmission = 0;
  const dead = { total: 0, silentLessThanA: 0, silentAtoA2: 0, silentMoreThanA2: 0, silences: [] };
  const perSecondDead = [];
  for (const { at, s } of admissions) {
    if (!deadAt(s, at)) {
      live++;
      if (s?.goesAtAdmission) goneAtAdmission++;
      continue;
    }
    dead.total++;
    const silence = (at - s.lastAnsweredAt) / 1000;
    dead.silences.push(silence);
    if (A !== null) {
      if (silence < A) dead.silentLessThanA++;
      else if (silence < A + 2) dead.silentAtoA2++;
      else dead.silentMoreThanA2++;
    }
    const sec = Math.max(0, Math.floor((at - t0) / 1000));
    perSecondDead[sec] = (perSecondDead[sec] ?? 0) + 1;
  }
  const silences = dead.silences.sort((a, b) => a - b);
  delete dead.silences;
  // How long they had been silent when admitted, by whole seconds (silenceHistogram[k]: k to k+1 s).
  dead.silenceHistogram = [];
  for (const x of silences) {
    const k = Math.floor(x);
    for (let i = dead.silenceHistogram.length; i <= k; i++) dead.silenceHistogram.push(0);
    dead.silenceHistogram[k]++;
  }
  dead.silenceSecondsP50 = silences.length ? Number(silences[Math.floor(silences.length / 2)].toFixed(1)) : null;
  dead.silenceSecondsMax = silences.length ? Number(silences[silences.length - 1].toFixed(1)) : null;
  // Members dropped as abandoned: any who was still polling then would be a wrong drop.
  const droppedLive = shopResult.dropped.filter(([id, at]) => {
    const s = byId.get(id);
    return s && !(s.stoppedAt !== null && s.stoppedAt <= at);
  }).length;
  const silent = load.shoppers.filter((s) => s.kind === 'silent');
  const stopped = load.shoppers.filter((s) => s.stoppedAt !== null);
  // The last live shopper: its wait from entering to its admission; or, if some never got in, how long they had waited by the end.
  const liveAdmitted = admissions.filter(({ at, s }) => s && !deadAt(s, at));
  const lastLive = liveAdmitted.reduce((best, a) => (!best || a.at > best.at ? a : best), null);
  const maxLiveWait = liveAdmitted.reduce((m, { at, s }) => Math.max(m, (at - s.enterEnd) / 1000), 0);
  const endAt = t0 + load.seconds * 1000;
  const liveStillWaiting = load.shoppers.filter((s) => s.admittedAt === null && (s.state === 'waiting-at-end' || s.state === 'waiting'));
  const liveStillWaitingFor = liveStillWaiting.reduce((m, s) => Math.max(m, (endAt - s.enterEnd) / 1000), 0);
  // Orders per minute: over the first 60 s (both runs still busy), and while live shoppers waited.
  const orderTimes = load.shoppers.filter((s) => s.orderedAt !== null).map((s) => s.orderedAt);
  const ordersBy = (seconds) => orderTimes.filter((at) => at - t0 <= seconds * 1000).length;
  const busyUntil = liveStillWaiting.length > 0 ? load.seconds : lastLive ? (lastLive.at - t0) / 1000 : load.seconds;
  // Tokens held by shoppers who will never order, per second: derived, not sampled. A token
  // nobody read ends at its pick-up deadline (admission + pickupTimeoutSeconds) or TTL;
  // one read (READY answered) and never used, at its TTL.
  const ttlMs = config.entryTokenTtlSeconds * 1000;
  const unreadMs = Math.min(ttlMs, config.pickupTimeoutSeconds != null ? config.pickupTimeoutSeconds * 1000 : Infinity);
  const goneTokens = admissions
    .filter(({ at, s }) => s && (deadAt(s, at) || s.state === 'gone' || s.state === 'gone-after-ready'))
    .map(({ at, s }) => [at, at + (s.state === 'gone-after-ready' ? ttlMs : unreadMs)]);
  const cumulative = [];
  let orders = 0;
  let deadSoFar = 0;
  const ordersPerSecond = [];
  for (const at of orderTimes) {
    const sec = Math.max(0, Math.floor((at - t0) / 1000));
    ordersPerSecond[sec] = (ordersPerSecond[sec] ?? 0) + 1;
  }
  const lastSecond = Math.ceil(load.seconds);
  for (let t = 0; t <= lastSecond; t++) {
    orders += ordersPerSecond[t] ?? 0;
    deadSoFar += perSecondDead[t] ?? 0;
    const row = series.find((r) => r.t === t + 1) ?? {};
    const edge = t0 + (t + 1) * 1000;
    cumulative.push({
      t: t + 1,
      orders,
      deadAdmissions: deadSoFar,
      tokensOfGoneShoppers: goneTokens.filter(([from, to]) => from <= edge && edge < to).length,
      active: row.active ?? null,
      waiting: row.waiting ?? null,
      droppedSoFar: shopResult.dropped.filter(([, at]) => at - t0 < (t + 1) * 1000).length,
    });
  }
  // Members admitted after someone who entered later (with holdSilentAfterSeconds: held, then back), and of them live.
  const admittedAtOf = new Map(admissions.map(({ id, at }) => [id, at]));
  const overtaken = shopResult.fifo.overtaken ?? [];
  const overtakenLive = overtaken.filter(([id]) => !deadAt(byId.get(id), admittedAtOf.get(id))).length;
  return {
    abandonAfterSeconds: A,
    holdSilentAfterSeconds: config.holdSilentAfterSeconds ?? null,
    held: shopResult.held ?? null,
    admittedAfterSomeoneWhoEnteredLater: { total: overtaken.length, live: overtakenLive },
    pickupTimeoutSeconds: config.pickupTimeoutSeconds ?? null,
    admissions: admissions.length,
    toLiveShoppers: live,
    liveShare: admissions.length ? Number((live / admissions.length).toFixed(4)) : null,
    toShoppersAlreadyGone: dead,
    liveAdmittedWhoNeverCameBack: goneAtAdmission,
    goneAfterReadingReady: load.outcome.goneAfterReadingReady,
    droppedAsAbandoned: shopResult.dropped.length,
    droppedWhileStillPolling: droppedLive,
    statsAbandoned: shopResult.final?.abandoned ?? null,
    silentShoppers: silent.length,
    stoppedPolling: stopped.length,
    silentAdmittedBeforeTheirMoment: silent.length - stopped.length,
    orders: orderTimes.length,
    ordersFirst60s: ordersBy(60),
    ordersPerMinuteFirst60s: ordersBy(60),
    busySeconds: Number(busyUntil.toFixed(1)),
    ordersPerMinuteWhileLiveWaited: Number(((ordersBy(busyUntil) / busyUntil) * 60).toFixed(0)),
    lastLiveShopperWaitSeconds: Number(maxLiveWait.toFixed(1)),
    lastLiveAdmittedAtSeconds: lastLive ? Number(((lastLive.at - t0) / 1000).toFixed(1)) : null,
    liveStillWaitingAtEnd: liveStillWaiting.length,
    liveStillWaitingForSeconds: Number(liveStillWaitingFor.toFixed(1)),
    cumulative,
  };
}

/** The abandonment charts (on solid, off dashed) from a run's results: { file: svg }. */
function abandonmentCharts({ runs, base, variants, date }) {
  const sub = `${base.shoppers.toLocaleString('en-US')} shoppers, ${base.silentWaiting * 100}% stop polling, ${base.goneAtAdmission * 100}% of admitted never return; rate ${base.admitRatePerSecond}/s, maxActive ${base.maxActive}, tokens ${base.entryTokenTtlSeconds} s; on: abandonAfter ${variants.on.abandonAfterSeconds} s${variants.on.holdSilentAfterSeconds ? `, hold ${variants.on.holdSilentAfterSeconds} s` : ''}, pick-up ${variants.on.pickupTimeoutSeconds} s; ${date.slice(0, 10)}`;
  const on = runs.on.abandonment;
  const off = runs.off.abandonment;
  const cum = (r, key) => r.cumulative.map((row) => [row.t, row[key]]);
  const sampled = (name, key) => runs[name].series.filter((row) => row[key] !== null && row[key] !== undefined).map((row) => [row.t, row[key]]);
  const width = 880;
  return {
    'perf-sim-abandonment-orders.svg': lineChart({
      title: 'Orders, and admissions of shoppers already gone: abandonment handling on vs off',
      subtitle: sub,
      yLabel: 'cumulative',
      width,
      series: [
        { name: 'orders, on', points: cum(on, 'orders'), color: '#2563eb' },
        { name: 'orders, off', points: cum(off, 'orders'), color: '#2563eb', dash: '6 4' },
        { name: 'admitted but gone, on', points: cum(on, 'deadAdmissions'), color: '#dc2626' },
        { name: 'admitted but gone, off', points: cum(off, 'deadAdmissions'), color: '#dc2626', dash: '6 4' },
      ],
    }),
    'perf-sim-abandonment-tokens.svg': lineChart({
      title: 'Tokens held vs maxActive, and those held by shoppers who will never order: on vs off',
      subtitle: sub,
      yLabel: 'tokens',
      width,
      series: [
        { name: 'tokens held, on', points: sampled('on', 'active'), color: '#2563eb' },
        { name: 'tokens held, off', points: sampled('off', 'active'), color: '#2563eb', dash: '6 4' },
        { name: 'held by the gone (derived), on', points: cum(on, 'tokensOfGoneShoppers'), color: '#dc2626' },
        { name: 'held by the gone (derived), off', points: cum(off, 'tokensOfGoneShoppers'), color: '#dc2626', dash: '6 4' },
      ],
      hLines: [{ y: base.maxActive, label: `maxActive ${base.maxActive}`, color: '#4b5563' }],
    }),
    'perf-sim-abandonment-waiting.svg': lineChart({
      title: 'Members waiting, and dropped as abandoned: abandonment handling on vs off',
      subtitle: sub,
      yLabel: 'members',
      width,
      series: [
        { name: 'waiting, on', points: sampled('on', 'waiting'), color: '#2563eb' },
        { name: 'waiting, off', points: sampled('off', 'waiting'), color: '#2563eb', dash: '6 4' },
        { name: 'dropped as abandoned (cumulative), on', points: cum(on, 'droppedSoFar'), color: '#16a34a' },
      ],
    }),
  };
}

const images = join(root, 'docs', 'images');
mkdirSync(images, { recursive: true });
mkdirSync(join(here, 'results'), { recursive: true });
const ok = (b) => (b ? 'OK ' : 'NOT OK');
const rateText = (c) =>
  c.rateChange ? `${c.admitRatePerSecond}/s, ${c.rateChange.admitRatePerSecond}/s from ${c.rateChange.atSeconds} s` : `${c.admitRatePerSecond}/s`;
const machine = () => ({
  cpus: os.cpus().length,
  memoryGiB: Math.round(os.totalmem() / 2 ** 30),
  node: process.version,
  redis: redisVersion,
  loadAverage: os.loadavg().map((v) => Number(v.toFixed(2))),
});

function printChecks(config, summary, prefix = '') {
  const s = summary.outcome;
  log(
    `${prefix}  ${ok(summary.maxOrderTransactionsInFlight <= config.maxActive)} max order transactions in flight ${summary.maxOrderTransactionsInFlight} (DB transactions at once: ${summary.maxDbTransactionsInFlight}); max tokens held ${summary.maxActiveSampled} vs maxActive ${config.maxActive}; ${summary.secondsAtMaxActive} s at maxActive`,
  );
  log(
    `${prefix}  ${ok(summary.admissionsOverBucketBound === 0)} admissions/s while members waited: mean ${summary.admissionsPerSecondWhileWaiting.mean}, max ${summary.admissionsPerSecondWhileWaiting.max} (configured ${config.admitRatePerSecond}/s); over any window <= rate x window + burst: exceeded by ${summary.admissionsOverBucketBound}`,
  );
  log(`${prefix}  ${ok(summary.membersLost === 0)} members lost: ${summary.membersLost} (told NOT_ENTERED while waiting: ${summary.notEnteredWhileWaiting})`);
  log(`${prefix}  ${ok(summary.fifoViolations === 0)} FIFO violations: ${summary.fifoViolations} (${summary.fifo.admitted} admissions checked)`);
  log(
    `${prefix}  ${ok(summary.duplicateTokenOrders === 0)} orders ${summary.orders} (in DB ${summary.ordersInDb}), two orders on one token: ${summary.duplicateTokenOrders}; orders failed ${s.orderFailed}`,
  );
  log(
    `${prefix}  polls: ${summary.polls.toLocaleString('en-US')}, latency p50 ${summary.pollLatencyMs.p50?.toFixed(1)} ms, p99 ${summary.pollLatencyMs.p99?.toFixed(1)} ms (worst second p99 ${summary.maxPollP99Ms.toFixed(1)} ms); max ${summary.maxPollsPerSecond} polls/s`,
  );
  log(
    `${prefix}  Redis: max ${summary.maxRedisCommandsPerSecond} commands/s, max ${summary.maxRedisScriptCallsPerSecond} script calls/s; polls cost ${summary.pollStoreCallsPerPoll} store calls each; all script calls / polls ${summary.redisScriptCallsPerPoll}`,
  );
  log(`${prefix}  store calls: ${JSON.stringify(summary.storeCalls)}; HTTP errors: ${JSON.stringify(summary.httpErrorsByStatus)}`);
  printHonesty(summary, prefix);
}

/** Estimate honesty (SPEC §14): the lines of one run. */
function printHonesty(summary, prefix = '') {
  const h = summary.estimateHonesty;
  if (!h) return;
  for (const c of summary.rateChanges ?? [])
    log(`${prefix}  rate change at ${c.atSeconds} s: ${JSON.stringify(c.patch)} -> ${c.error ? `failed: ${c.error}` : `${c.admitRatePerSecond}/s in force`}`);
  const line = (name, e) =>
    `${prefix}  ${ok(e.meetsTargets)} estimate honesty ${name}: median ${e.medianPct}%, p90 ${e.p90Pct}% (targets <= ${h.targets.medianPct}%, <= ${h.targets.p90Pct}%) of the actual wait; signed median ${e.signedMedianPct}% (p10 ${e.signedP10Pct}%, p90 ${e.signedP90Pct}%); ${e.estimated} members${e.unestimated ? `, ${e.unestimated} shown no estimate` : ''}`;
  log(`${prefix}  members admitted who entered waiting: ${h.admittedWhoEnteredWaiting}, of them waited >= ${h.minWaitSeconds} s: ${h.waitedAtLeastMin}`);
  for (const [name, e] of [
    ['at entry', h.atEntry],
    ['at half the wait', h.atHalfWait],
  ])
    log(e.estimated ? line(name, e) : `${prefix}  estimate honesty ${name}: no member estimated who waited >= ${h.minWaitSeconds} s`);
  if (h.atHalfWaitAfterRateChange?.estimated) log(line('at half the wait, shown after the rate change', h.atHalfWaitAfterRateChange));
  if (h.atEntryAdmittedBeforeRateChange?.estimated) log(line('at entry, admitted before the rate change', h.atEntryAdmittedBeforeRateChange));
  if (h.atEntryAdmittedAfterRateChange?.estimated) log(line('at entry, told before the change and admitted after it', h.atEntryAdmittedAfterRateChange));
  const n = h.neverShrinksWhileNobodyAdmitted;
  const r = n.rankDidNotFall;
  log(
    `${prefix}  ${ok(n.ok && r.ok)} estimate never shrinks while nobody is admitted: ${n.shrank} of ${n.pairsChecked} pairs of polls with no admission step between shrank${n.shrank ? ` (by up to ${n.maxShrinkSeconds} s)` : ''}; ${r.shrank} of ${r.pairs} pairs whose rank did not fall${r.shrank ? ` (by up to ${r.maxShrinkSeconds} s; e.g. ${JSON.stringify(r.examples[0])})` : ''}`,
  );
}

try {
  if (args.includes('--always-on')) {
    // The safety net and stock (SPEC §18): bench/sim/always-on.mjs.
    const { runAlwaysOn } = await import('./sim/always-on.mjs');
    await runAlwaysOn({ short });
  } else if (!classic && args.includes('--replot')) {
    // The charts again from the last run's results (no run).
    const last = JSON.parse(readFileSync(join(here, 'results', 'simulate-abandonment-latest.json'), 'utf8'));
    const charts = abandonmentCharts({ runs: last.runs, base: last.base, variants: last.variants, date: last.date });
    for (const [file, svg] of Object.entries(charts)) writeFileSync(join(images, file), svg);
    log(
      `wrote ${Object.keys(charts)
        .map((f) => `docs/images/${f}`)
        .join(', ')} from bench/results/simulate-abandonment-latest.json (${last.date})`,
    );
  } else if (classic) {
    const config = classicConfig;
    log(
      `simulate${short ? ' --short' : ''}: ${config.shoppers.toLocaleString('en-US')} shoppers over ${config.arrivalSeconds} s (${config.silentWaiting * 100}% stop polling); queue ${rateText(config)}, maxActive ${config.maxActive}, abandonAfterSeconds ${config.abandonAfterSeconds}, pickupTimeoutSeconds ${config.pickupTimeoutSeconds}; redis-server ${redisVersion}`,
    );
    progress.step('start');
    const v = await prepare('', config);
    const t0 = Date.now() + 300;
    progress.step('crowd');
    const raw = await run(v, t0);
    progress.step('report');
    const { summary, series } = checksOf(config, raw);
    const s = summary.outcome;

    // ---- charts
    const pts = (key) => series.map((r) => [r.t, r[key]]);
    const sub = `${config.shoppers.toLocaleString('en-US')} shoppers in ${config.arrivalSeconds} s; rate ${rateText(config)}, maxActive ${config.maxActive}, abandonAfter ${config.abandonAfterSeconds} s; 2 cores, loopback (${new Date().toISOString().slice(0, 10)})`;
    // One row per chart: series are [legend, key of the per-second sample, dash?]; `note` goes after the common subtitle.
    const chartTable = [
      { file: 'perf-sim-waiting.svg', title: 'Members waiting', yLabel: 'members', series: [['waiting', 'waiting']] },
      {
        file: 'perf-sim-tokens.svg',
        title: 'Tokens held and order transactions in flight',
        yLabel: 'members',
        series: [
          ['READY', 'ready'],
          ['CLAIMED', 'claimed'],
          ['READY + CLAIMED', 'active', '4 3'],
        ],
        hLines: [{ y: config.maxActive, label: `maxActive ${config.maxActive}`, color: '#dc2626' }],
      },
      {
        file: 'perf-sim-orders.svg',
        title: 'Order transactions in flight (claim to consume/release, max per second)',
        note: 'SQLite commits synchronously: at most one DB transaction at a time',
        yLabel: 'requests',
        series: [
          ['order transactions in flight', 'maxOrdersInFlight'],
          ['CLAIMED (sampled)', 'claimed'],
        ],
      },
      {
        file: 'perf-sim-rates.svg',
        title: 'Admissions and orders per second',
        yLabel: 'per second',
        series: [
          ['admissions/s', 'admissionsPerSecond'],
          ['orders/s', 'ordersPerSecond'],
        ],
        hLines: [
          { y: config.admitRatePerSecond, label: `admitRatePerSecond ${config.admitRatePerSecond}`, color: '#dc2626' },
          ...(config.rateChange
            ? [
                {
                  y: config.rateChange.admitRatePerSecond,
                  label: `from ${config.rateChange.atSeconds} s: ${config.rateChange.admitRatePerSecond}`,
                  color: '#9333ea',
                },
              ]
            : []),
        ],
      },
      {
        file: 'perf-sim-latency.svg',
        title: 'Poll latency (GET /queue/position over HTTP)',
        yLabel: 'ms',
        series: [
          ['p99', 'pollP99Ms'],
          ['p50', 'pollP50Ms'],
        ],
      },
      {
        file: 'perf-sim-redis.svg',
        title: 'Redis load vs HTTP polls',
        yLabel: 'per second',
        series: [
          ['HTTP polls/s', 'polls'],
          ['Redis commands/s (incl. inside scripts)', 'redisCommandsPerSecond'],
          ['Redis script calls/s', 'redisScriptCallsPerSecond'],
        ],
      },
    ];
    const charts = short
      ? {}
      : Object.fromEntries(
          chartTable.map(({ file, title, note, yLabel, series: lines, hLines }) => [
            file,
            lineChart({
              title,
              subtitle: note ? `${sub}; ${note}` : sub,
              yLabel,
              series: lines.map(([name, key, dash]) => ({ name, points: pts(key), dash })),
              hLines,
            }),
          ]),
        );
    if (!short && summary.estimateHonesty) Object.assign(charts, honestyCharts(raw.load.estimates, summary.estimateHonesty, sub));
    // A variant (SIM_SUFFIX, e.g. another rate change) keeps the default run's files: its result and its
    // estimate charts get the suffix, and the other charts are not written.
    if (suffix) for (const file of Object.keys(charts)) if (!file.includes('estimate')) delete charts[file];
    for (const [file, svg] of Object.entries(charts)) writeFileSync(join(images, suffixed(file)), svg);

    const result = {
      date: new Date().toISOString(),
      machine: machine(),
      short,
      config,
      summary,
      series,
      charts: Object.keys(charts).map((f) => `docs/images/${suffixed(f)}`),
      seconds: Math.round((performance.now() - started) / 1000),
    };
    const out = short ? (process.env.SIM_OUT ?? join(os.tmpdir(), 'waitgate-simulate-short.json')) : join(here, 'results', suffixed('simulate-latest.json'));
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);

    log(
      `\nFlash crowd: ${config.shoppers.toLocaleString('en-US')} shoppers in ${config.arrivalSeconds} s, ran ${summary.durationSeconds} s${summary.stoppedByDeadline ? ' (stopped by the time limit)' : ''}`,
    );
    log(
      `  outcome: ${s.ordered} ordered, ${s.abandonedWaiting} gave up waiting, ${s.stoppedPolling} stopped polling, ${s.leftWhenReady} left when READY, ${s.vanishedWhenReady} vanished when READY, ${s.stillWaitingAtEnd} still waiting at the end, ${s.orderFailed} orders failed or cut off by the time limit`,
    );
    printChecks(config, summary);
    log(
      `wrote ${short ? out : `bench/results/${suffixed('simulate-latest.json')}`}${
        short
          ? ''
          : ` and ${Object.keys(charts)
              .map((f) => `docs/images/${suffixed(f)}`)
              .join(', ')}`
      } (${result.seconds} s in all)`,
    );
  } else {
    const base = abandonmentConfig;
    const configs = Object.fromEntries(Object.entries(VARIANTS).map(([name, v]) => [name, { ...base, ...v }]));
    log(
      `simulate --abandonment: abandoning shoppers, handling on (abandonAfterSeconds ${VARIANTS.on.abandonAfterSeconds}, holdSilentAfterSeconds ${VARIANTS.on.holdSilentAfterSeconds}, pickupTimeoutSeconds ${VARIANTS.on.pickupTimeoutSeconds}) vs off, side by side; ${base.shoppers.toLocaleString('en-US')} shoppers over ${base.arrivalSeconds} s each (${base.silentWaiting * 100}% stop polling while waiting, ${base.goneAtAdmission * 100}% of those admitted never come back); rate ${base.admitRatePerSecond}/s, maxActive ${base.maxActive}, tokens ${base.entryTokenTtlSeconds} s; redis-server ${redisVersion}`,
    );
    const prepared = {};
    progress.step('start');
    for (const [name, config] of Object.entries(configs)) prepared[name] = await prepare(name, config);
    const t0 = Date.now() + 800;
    const names = Object.keys(prepared);
    progress.step('crowd');
    const raws = await Promise.all(names.map((name) => run(prepared[name], t0)));
    progress.step('report');
    const runs = {};
    names.forEach((name, i) => {
      const config = configs[name];
      const checks = checksOf(config, raws[i]);
      runs[name] = {
        config: {
          abandonAfterSeconds: config.abandonAfterSeconds,
          holdSilentAfterSeconds: config.holdSilentAfterSeconds,
          pickupTimeoutSeconds: config.pickupTimeoutSeconds,
        },
        ...checks,
        abandonment: abandonmentFiguresOf(config, raws[i], checks, t0),
      };
    });

    // ---- charts: on (solid) vs off (dashed)
    const charts = abandonmentCharts({ runs, base, variants: VARIANTS, date: new Date().toISOString() });
    const on = runs.on.abandonment;
    const off = runs.off.abandonment;
    for (const [file, svg] of Object.entries(charts)) writeFileSync(join(images, file), svg);

    const result = {
      date: new Date().toISOString(),
      machine: machine(),
      base,
      variants: VARIANTS,
      runs,
      charts: Object.keys(charts).map((f) => `docs/images/${suffixed(f)}`),
      seconds: Math.round((performance.now() - started) / 1000),
    };
    writeFileSync(join(here, 'results', 'simulate-abandonment-latest.json'), `${JSON.stringify(result, null, 2)}\n`);

    for (const name of names) {
      const { summary } = runs[name];
      const a = runs[name].abandonment;
      const s = summary.outcome;
      log(
        `\n[${name}] abandonAfterSeconds ${a.abandonAfterSeconds}, holdSilentAfterSeconds ${a.holdSilentAfterSeconds}, pickupTimeoutSeconds ${a.pickupTimeoutSeconds}: ran ${summary.durationSeconds} s${summary.stoppedByDeadline ? ' (stopped by the time limit)' : ''}`,
      );
      log(
        `  outcome: ${s.ordered} ordered, ${s.stoppedPolling} stopped polling while waiting, ${s.goneAtAdmission} never came back after admission (+${s.goneAfterReadingReady} after reading READY), ${s.stillWaitingAtEnd} still waiting at the end, ${s.orderFailed} orders failed, ${s.unfinished} unfinished`,
      );
      log(
        `  admissions ${a.admissions}: ${a.toLiveShoppers} to live shoppers (${(a.liveShare * 100).toFixed(1)}%), ${a.toShoppersAlreadyGone.total} to shoppers already gone${a.abandonAfterSeconds !== null ? ` (silent < ${a.abandonAfterSeconds} s: ${a.toShoppersAlreadyGone.silentLessThanA}; ${a.abandonAfterSeconds}-${a.abandonAfterSeconds + 2} s: ${a.toShoppersAlreadyGone.silentAtoA2}; longer: ${a.toShoppersAlreadyGone.silentMoreThanA2})` : ''}, silence p50 ${a.toShoppersAlreadyGone.silenceSecondsP50} s, max ${a.toShoppersAlreadyGone.silenceSecondsMax} s`,
      );
      log(`  dropped as abandoned ${a.droppedAsAbandoned} (stats ${a.statsAbandoned}), of them still polling: ${a.droppedWhileStillPolling}`);
      if (a.held) log(`  held at the head: in ${a.held.steps} admission steps, at most ${a.held.max} in one step`);
      const o = summary.fifo.overtaken;
      if (o.count > 0)
        log(
          `  admitted after someone who entered later: ${o.count} (${a.admittedAfterSomeoneWhoEnteredLater.live} of them live when admitted), after the first such admission by p50 ${o.p50Seconds} s, max ${o.maxSeconds} s`,
        );
      log(
        `  orders ${a.orders}: ${a.ordersFirst60s} in the first 60 s; ${a.ordersPerMinuteWhileLiveWaited}/min while live shoppers waited (${a.busySeconds} s)`,
      );
      log(
        `  last live shopper admitted at ${a.lastLiveAdmittedAtSeconds} s, longest wait of a live shopper admitted ${a.lastLiveShopperWaitSeconds} s; live shoppers never admitted: ${a.liveStillWaitingAtEnd}${a.liveStillWaitingAtEnd ? ` (waited ${a.liveStillWaitingForSeconds} s by the end)` : ''}`,
      );
      printChecks(configs[name], summary);
    }
    log(
      `\n  ${ok(on.liveShare >= 0.95)} share of admissions to live shoppers with handling on: ${(on.liveShare * 100).toFixed(1)}% (target >= 95%; off ${(off.liveShare * 100).toFixed(1)}%)`,
    );
    log(`  ${ok(on.ordersFirst60s > off.ordersFirst60s)} orders per minute (first 60 s): on ${on.ordersFirst60s}, off ${off.ordersFirst60s}`);
    log(`  ${ok(on.droppedWhileStillPolling === 0)} shoppers dropped while still polling: ${on.droppedWhileStillPolling}`);
    log(
      `wrote bench/results/simulate-abandonment-latest.json and ${Object.keys(charts)
        .map((f) => `docs/images/${f}`)
        .join(', ')} (${result.seconds} s in all)`,
    );
  }
} finally {
  progress.end();
  clearTimeout(hardStop);
  killChildren();
  await Promise.all(monitors.map((m) => m.quit().catch(() => m.disconnect())));
  await Promise.all(servers.map(async (r) => r.stop()));
}
