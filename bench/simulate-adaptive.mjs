#!/usr/bin/env node
// npm run simulate:adaptive: adaptive admission against a scripted order database (issue #15).
//
// Four runs at once, each with its own redis-server, RedisStore and queue, the same crowd:
//   latency: the database's service time is 50 ms, 400 ms from t = 30 s to t = 90 s;
//   failures: 50 ms throughout, and 20% of the orders fail from t = 30 s to t = 50 s;
// each with a fixed rate and with adaptive admission, side by side.
// The database: 40 connections and a FIFO line in front of them, so it completes 800
// orders/s at 50 ms and 100/s at 400 ms; beyond that, orders queue and their latency grows.
// Every admitted member claims at once and orders; the order is consumed when it
// commits, released when it fails. An order's latency is from its claim to its settle.
// Fixed: 150 admissions/s. Adaptive: targetLatencyMs 300, min 20/s, max 150/s (starts at 150).
// Issue 23 (SPEC §14): the latency scenario twice more with adaptive admission, with one
// shopper beside the crowd who claims its token 40 times a second through waitgate/fetch's
// guard and is answered 400 (shopper400) or 500 (shopper500) each time, released at once.
// A 400 counts no failure; a 500 counts one per token per 2 s order window. The rate in
// force must stay within 10% of the run without the shopper. SIM_ONLY_SHOPPER=1 runs only
// those three (the latency scenario, adaptive), about 2 minutes 30 s as well, and writes
// bench/results/simulate-adaptive-shopper-latest.json instead.
//
// Reports, per second: the rate in force, admissions, order latency p95, orders in flight,
// failed orders; and the issue's figures: order latency p95 from t = 40 s to 90 s (at most
// 2x the target with adaptive admission, above it with the fixed rate), the time after the
// recovery (t = 90 s) until the rate is back at 90% of the maximum, and that no member was
// lost (entered = waiting + admitted) and no token used twice. Writes
// docs/images/perf-sim-adaptive-*.svg and bench/results/simulate-adaptive-latest.json.
// About 2 minutes 30 s.   npm run build && npm run simulate:adaptive

import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { withEntryToken } from '../dist/fetch.js';
import { RedisStore, WaitingQueue } from '../dist/index.js';
import { redisServerVersion, startBenchRedisServer } from '../scripts/redis-server.mjs';
import { mulberry32 } from './lib/seeded-random.mjs';
import { lineChart } from './lib/svg-chart.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const env = (name, fallback) => (process.env[name] ? Number(process.env[name]) : fallback);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const SECONDS = env('SIM_SECONDS', 130);
const ONLY_SHOPPER = process.env.SIM_ONLY_SHOPPER === '1';
const SHOPPER_PER_SECOND = 40;
const MEMBERS = env('SIM_MEMBERS', 20_000);
const CONNECTIONS = 40;
const FIXED_RATE = 150;
const ADAPTIVE = { mode: 'adaptive', targetLatencyMs: 300, minRatePerSecond: 20, maxRatePerSecond: 150 };
const SCENARIOS = {
  latency: { serviceMs: (t) => (t >= 30 && t < 90 ? 400 : 50), fails: () => false, recoveryAt: 90 },
  failures: { serviceMs: () => 50, fails: (t, random) => t >= 30 && t < 50 && random() < 0.2, recoveryAt: 50 },
};

/** The order database: CONNECTIONS at work, a FIFO line in front of them. */
function orderDatabase(scenario, elapsedSeconds) {
  const line = [];
  let busy = 0;
  const random = mulberry32(42); // both runs of a scenario see the same failures
  const next = () => {
    while (busy < CONNECTIONS && line.length > 0) {
      const { resolve } = line.shift();
      busy++;
      const t = elapsedSeconds();
      const failed = scenario.fails(t, random);
      setTimeout(() => {
        busy--;
        resolve(!failed);
        next();
      }, scenario.serviceMs(t));
    }
  };
  return {
    /** Resolves true when the order committed, false when it failed. */
    order: () =>
      new Promise((resolve) => {
        line.push({ resolve });
        next();
      }),
    inFlight: () => busy + line.length,
  };
}

const p95 = (values) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)];
};

/**
 * One shopper beside the crowd: every 1/40 s it sends an order with its token through
 * waitgate/fetch's guard, which claims it; the handler answers `status` (400 or 500), so
 * the guard releases the claim at once (failed only for the 500). Counts the answers.
 */
function startShopper(queue, token, status) {
  const handle = withEntryToken(queue, { memberId: (req) => req.headers.get('x-member') }, () => Response.json({ error: 'refused' }, { status }));
  const answers = {};
  let stopped = false;
  const done = (async () => {
    const t0 = performance.now();
    for (let i = 0; !stopped; i++) {
      const response = await handle(new Request('http://sim.test/orders', { method: 'POST', headers: { 'x-member': 'shopper', 'x-entry-token': token } }));
      answers[response.status] = (answers[response.status] ?? 0) + 1;
      await sleep(Math.max(0, ((i + 1) * 1000) / SHOPPER_PER_SECOND - (performance.now() - t0)));
    }
  })();
  return {
    answers,
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

async function run(scenarioName, mode, shopperStatus = null) {
  const scenario = SCENARIOS[scenarioName];
  const server = await startBenchRedisServer();
  const client = new Redis(server.url, { maxRetriesPerRequest: 1 });
  const queue = new WaitingQueue({
    store: new RedisStore({ client }),
    name: `sim-${scenarioName}-${mode}${shopperStatus ? `-shopper${shopperStatus}` : ''}`,
    admitRatePerSecond: FIXED_RATE,
    admitBurst: 150,
    abandonAfterSeconds: null,
    entryTokenTtlSeconds: 600,
    claimTtlSeconds: 60,
    operationTimeoutMs: 5000,
    admission: mode === 'adaptive' ? ADAPTIVE : { mode: 'fixed' },
  });
  // The shopper, if any, enters first: admitted in the first step, it never orders for real.
  if (shopperStatus) await queue.enter('shopper');
  for (let i = 0; i < MEMBERS; i += 500) await Promise.all(Array.from({ length: 500 }, (_, j) => queue.enter(`m${i + j}`)));

  const t0 = performance.now();
  const elapsed = () => (performance.now() - t0) / 1000;
  const db = orderDatabase(scenario, elapsed);
  const consumedBy = new Map(); // member -> consumes that answered true
  const seconds = Array.from({ length: SECONDS }, () => ({ admitted: 0, latencies: [], failed: 0 }));
  const bucketOf = (t) => seconds[Math.min(SECONDS - 1, Math.floor(t))];
  const pending = new Set();

  const order = async (admission) => {
    const claim = await queue.claim(admission.memberId, admission.entryToken);
    const claimedAt = elapsed();
    const committed = await db.order();
    const done = elapsed();
    if (committed) {
      if (await queue.consume(claim)) consumedBy.set(claim.memberId, (consumedBy.get(claim.memberId) ?? 0) + 1);
    } else {
      await queue.release(claim);
      bucketOf(done).failed++;
    }
    bucketOf(done).latencies.push((done - claimedAt) * 1000);
  };

  const samples = [];
  let stopped = false;
  let shopper = null;
  const admitter = (async () => {
    while (!stopped) {
      const started = performance.now();
      const admissions = await queue.admit();
      bucketOf(elapsed()).admitted += admissions.length;
      for (const a of admissions) {
        if (a.memberId === 'shopper') {
          shopper = startShopper(queue, a.entryToken, shopperStatus);
          continue;
        }
        const p = order(a).catch((error) => console.error('order failed:', error.message));
        pending.add(p);
        void p.finally(() => pending.delete(p));
      }
      await sleep(Math.max(0, 250 - (performance.now() - started)));
    }
  })();
  for (let s = 0; s < SECONDS; s++) {
    await sleep(Math.max(0, (s + 1) * 1000 - (performance.now() - t0)));
    const stats = await queue.stats();
    samples.push({ t: s + 1, rate: stats.admitRatePerSecond, waiting: stats.waiting, inFlight: db.inFlight() });
  }
  stopped = true;
  await admitter;
  await shopper?.stop();
  await Promise.all(pending);
  const stats = await queue.stats();
  client.disconnect();
  await server.stop();

  const perSecond = samples.map((sample, i) => ({
    ...sample,
    admitted: seconds[i].admitted,
    latencyP95: p95(seconds[i].latencies),
    failed: seconds[i].failed,
  }));
  const latencyP95From40To90 = p95(seconds.slice(40, 90).flatMap((s) => s.latencies));
  const back = perSecond.find((row) => row.t > scenario.recoveryAt && row.rate >= 0.9 * ADAPTIVE.maxRatePerSecond);
  return {
    scenario: scenarioName,
    mode,
    shopper: shopperStatus ? { status: shopperStatus, perSecond: SHOPPER_PER_SECOND, answers: shopper?.answers ?? {} } : null,
    perSecond,
    meanRate: perSecond.reduce((n, row) => n + row.rate, 0) / perSecond.length,
    admitted: perSecond.reduce((n, row) => n + row.admitted, 0),
    latencyP95From40To90Ms: latencyP95From40To90 === null ? null : Math.round(latencyP95From40To90),
    secondsAfterRecoveryTo90PercentOfMax: mode === 'adaptive' && back ? back.t - scenario.recoveryAt : null,
    failedOrders: seconds.reduce((n, s) => n + s.failed, 0),
    orders: seconds.reduce((n, s) => n + s.latencies.length, 0),
    totals: stats.totals,
    waitingAtEnd: stats.waiting,
    noMemberLost: stats.totals.entered === stats.waiting + stats.totals.admitted,
    noTokenUsedTwice: [...consumedBy.values()].every((n) => n === 1) && stats.totals.consumed === consumedBy.size,
  };
}

if (!redisServerVersion()) throw new Error('redis-server is not on PATH');
const started = Date.now();
const runs = await Promise.all([
  ...(ONLY_SHOPPER ? [] : [run('latency', 'fixed'), run('failures', 'fixed'), run('failures', 'adaptive')]),
  run('latency', 'adaptive'),
  run('latency', 'adaptive', 400),
  run('latency', 'adaptive', 500),
]);
const find = (scenario, mode, shopper = null) => runs.find((r) => r.scenario === scenario && r.mode === mode && (r.shopper?.status ?? null) === shopper);

const clip = (v, max) => (v === null ? null : Math.min(v, max));
const series = (r, key, options = {}) => ({
  points: r.perSecond.map((row) => [row.t, options.clip ? clip(row[key], options.clip) : row[key]]),
  ...options.style,
});
const date = new Date().toISOString();
const sub = (what) =>
  `${what}; fixed ${FIXED_RATE}/s vs adaptive (target ${ADAPTIVE.targetLatencyMs} ms, ${ADAPTIVE.minRatePerSecond}-${ADAPTIVE.maxRatePerSecond}/s); DB of ${CONNECTIONS} connections; ${date.slice(0, 10)}`;
const LATENCY_CLIP = 3000;
const shopperChart = lineChart({
  title: `One shopper answered 400 (or 500) ${SHOPPER_PER_SECOND} times a second beside the crowd: the rate in force`,
  subtitle: sub('latency scenario, adaptive'),
  yLabel: 'admissions/s',
  width: 880,
  series: [
    { name: 'no shopper', ...series(find('latency', 'adaptive'), 'rate'), color: '#2563eb' },
    { name: 'shopper answered 400', ...series(find('latency', 'adaptive', 400), 'rate'), color: '#16a34a', dash: '6 4' },
    { name: 'shopper answered 500', ...series(find('latency', 'adaptive', 500), 'rate'), color: '#dc2626', dash: '2 3' },
  ],
});
const charts = ONLY_SHOPPER
  ? { 'perf-sim-adaptive-shopper.svg': shopperChart }
  : {
      'perf-sim-adaptive-shopper.svg': shopperChart,
      'perf-sim-adaptive-rate.svg': lineChart({
        title: 'Admission rate in force: the database slows from 50 ms to 400 ms at t = 30 s, recovers at t = 90 s',
        subtitle: sub('latency scenario'),
        yLabel: 'admissions/s',
        width: 880,
        series: [
          { name: 'rate in force, fixed', ...series(find('latency', 'fixed'), 'rate'), color: '#dc2626', dash: '6 4' },
          { name: 'rate in force, adaptive', ...series(find('latency', 'adaptive'), 'rate'), color: '#2563eb' },
          { name: 'admitted/s, adaptive', ...series(find('latency', 'adaptive'), 'admitted'), color: '#93c5fd' },
        ],
        hLines: [{ y: 100, label: 'DB capacity at 400 ms (100/s)', color: '#4b5563' }],
      }),
      'perf-sim-adaptive-latency.svg': lineChart({
        title: `Order latency p95 per second (clipped at ${LATENCY_CLIP / 1000} s)`,
        subtitle: sub('latency scenario'),
        yLabel: 'ms',
        width: 880,
        series: [
          { name: 'fixed', ...series(find('latency', 'fixed'), 'latencyP95', { clip: LATENCY_CLIP }), color: '#dc2626', dash: '6 4' },
          { name: 'adaptive', ...series(find('latency', 'adaptive'), 'latencyP95', { clip: LATENCY_CLIP }), color: '#2563eb' },
        ],
        hLines: [{ y: 2 * ADAPTIVE.targetLatencyMs, label: `2x target (${2 * ADAPTIVE.targetLatencyMs} ms)`, color: '#4b5563' }],
      }),
      'perf-sim-adaptive-inflight.svg': lineChart({
        title: 'Orders in flight (at the database or waiting for a connection)',
        subtitle: sub('latency scenario'),
        yLabel: 'orders',
        width: 880,
        series: [
          { name: 'fixed', ...series(find('latency', 'fixed'), 'inFlight'), color: '#dc2626', dash: '6 4' },
          { name: 'adaptive', ...series(find('latency', 'adaptive'), 'inFlight'), color: '#2563eb' },
        ],
      }),
      'perf-sim-adaptive-failures.svg': lineChart({
        title: '20% of orders fail from t = 30 s to t = 50 s: rate in force and failed orders/s',
        subtitle: sub('failure scenario'),
        yLabel: 'per second',
        width: 880,
        series: [
          { name: 'rate in force, fixed', ...series(find('failures', 'fixed'), 'rate'), color: '#dc2626', dash: '6 4' },
          { name: 'rate in force, adaptive', ...series(find('failures', 'adaptive'), 'rate'), color: '#2563eb' },
          { name: 'failed orders/s, fixed', ...series(find('failures', 'fixed'), 'failed'), color: '#f97316', dash: '6 4' },
          { name: 'failed orders/s, adaptive', ...series(find('failures', 'adaptive'), 'failed'), color: '#16a34a' },
        ],
      }),
    };
const images = join(root, 'docs', 'images');
mkdirSync(images, { recursive: true });
for (const [file, svg] of Object.entries(charts)) writeFileSync(join(images, file), svg);
mkdirSync(join(here, 'results'), { recursive: true });
const summary = runs.map(({ perSecond: _perSecond, ...rest }) => rest);
writeFileSync(
  join(here, 'results', ONLY_SHOPPER ? 'simulate-adaptive-shopper-latest.json' : 'simulate-adaptive-latest.json'),
  JSON.stringify(
    {
      date,
      onlyShopper: ONLY_SHOPPER,
      durationSeconds: Math.round((Date.now() - started) / 1000),
      machine: { cpus: os.cpus().length, node: process.version, redis: redisServerVersion() },
      config: { seconds: SECONDS, members: MEMBERS, connections: CONNECTIONS, fixedRate: FIXED_RATE, adaptive: ADAPTIVE, shopperPerSecond: SHOPPER_PER_SECOND },
      summary,
      runs,
    },
    null,
    2,
  ),
);
const ok = (b) => (b ? 'OK    ' : 'NOT OK');
const la = find('latency', 'adaptive');
for (const status of [400, 500]) {
  const r = find('latency', 'adaptive', status);
  // Per second, after the first 2 s (the shopper's first orders): the largest gap between the rates.
  const gaps = r.perSecond.slice(2).map((row, i) => Math.abs(row.rate - la.perSecond[i + 2].rate) / la.perSecond[i + 2].rate);
  const meanGap = Math.abs(r.meanRate - la.meanRate) / la.meanRate;
  console.log(
    `${ok(meanGap <= 0.1)} shopper answered ${status} ${SHOPPER_PER_SECOND}/s (${JSON.stringify(r.shopper.answers)}): mean rate ${r.meanRate.toFixed(1)}/s vs ${la.meanRate.toFixed(1)}/s without (${(100 * meanGap).toFixed(1)}%), ` +
      `admitted ${r.admitted} vs ${la.admitted}, largest gap in one second ${(100 * Math.max(...gaps)).toFixed(1)}%, ` +
      `min rate ${Math.min(...r.perSecond.map((row) => row.rate)).toFixed(1)} vs ${Math.min(...la.perSecond.map((row) => row.rate)).toFixed(1)}`,
  );
}
if (ONLY_SHOPPER) process.exit(0);
const lf = find('latency', 'fixed');
const fa = find('failures', 'adaptive');
console.log(
  `order latency p95, t 40-90 s: fixed ${lf.latencyP95From40To90Ms} ms, adaptive ${la.latencyP95From40To90Ms} ms (target ${ADAPTIVE.targetLatencyMs})`,
);
console.log(`${ok(la.latencyP95From40To90Ms <= 2 * ADAPTIVE.targetLatencyMs)} adaptive p95 at most 2x the target`);
console.log(`${ok(lf.latencyP95From40To90Ms > 2 * ADAPTIVE.targetLatencyMs)} fixed p95 above 2x the target`);
for (const r of [la, fa]) {
  console.log(
    `${ok(r.secondsAfterRecoveryTo90PercentOfMax !== null && r.secondsAfterRecoveryTo90PercentOfMax <= 30)} ${r.scenario}: rate back at 90% of max ${r.secondsAfterRecoveryTo90PercentOfMax} s after the recovery`,
  );
}
for (const r of runs) {
  console.log(
    `${ok(r.noMemberLost && r.noTokenUsedTwice)} ${r.scenario}/${r.mode}: no member lost, no token used twice; orders ${r.orders}, failed ${r.failedOrders}, totals ${JSON.stringify(r.totals)}`,
  );
}
