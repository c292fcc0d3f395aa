#!/usr/bin/env node
// npm run simulate: a flash crowd on the example shop, bounded (about 1.5 minutes).
//
//   redis-server (spawned here) <- shop process (examples/express-shop createShop, RedisStore)
//                                 <- shoppers process (HTTP load: 20,000 shoppers in 5 s)
//
// Records per second: waiting, READY, CLAIMED, admissions/s, orders/s, order transactions
// in flight, poll latency p50/p99, Redis commands/s; writes SVG charts to docs/images/,
// bench/results/simulate-latest.json, and prints a summary.
//
//   npm run build && npm run simulate
//   SIM_SHOPPERS=5000 npm run simulate      (smaller crowd)

import { fork } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { redisServerVersion, startBenchRedisServer } from '../scripts/redis-server.mjs';
import { commandStats, countCommands } from './lib/redis-info.mjs';
import { lineChart } from './lib/svg-chart.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const env = (name, fallback) => (process.env[name] ? Number(process.env[name]) : fallback);

const config = {
  shoppers: env('SIM_SHOPPERS', 20_000),
  arrivalSeconds: env('SIM_ARRIVAL_SECONDS', 5),
  maxSeconds: env('SIM_MAX_SECONDS', 95), // the shoppers stop by themselves at the latest then
  // The queue (shop process).
  admitRatePerSecond: env('SIM_RATE', 300),
  maxActive: env('SIM_MAX_ACTIVE', 800),
  admitIntervalMs: 250,
  entryTokenTtlSeconds: 20,
  claimTtlSeconds: 15,
  positionCache: true,
  stock: 1_000_000,
  // The shoppers.
  jitter: 0.2,
  sockets: 256,
  abandonWaiting: 0.08, // give up while waiting after their patience runs out (DELETE /queue)
  patienceSeconds: [5, 40],
  leaveWhenReady: 0.02, // READY, then change their mind (DELETE /queue)
  vanishWhenReady: 0.01, // READY, then close the tab: the token expires unused
  thinkSeconds: [0.2, 1.0], // READY -> order
};

const started = performance.now();
const redis = await startBenchRedisServer();
const redisVersion = redisServerVersion();
const monitor = new Redis(redis.url, { maxRetriesPerRequest: 1 });
const children = [];
const killChildren = () => children.forEach((c) => c.exitCode === null && c.kill('SIGKILL'));
process.once('exit', killChildren);
const hardStop = setTimeout(() => {
  console.error('simulate: hard time limit reached, stopping');
  killChildren();
  process.exit(1);
}, (config.maxSeconds + 60) * 1000);
hardStop.unref();

const once = (child, type) => new Promise((resolve, reject) => {
  const onMessage = (m) => m.type === type && (child.off('message', onMessage), resolve(m));
  child.on('message', onMessage);
  child.once('exit', (code) => reject(new Error(`${child.spawnargs.join(' ')} exited (${code}) before "${type}"`)));
});

try {
  console.log(`simulate: ${config.shoppers.toLocaleString('en-US')} shoppers over ${config.arrivalSeconds} s; queue ${config.admitRatePerSecond}/s, maxActive ${config.maxActive}; redis-server ${redisVersion} on port ${redis.port}`);
  const shop = fork(join(here, 'sim', 'shop.mjs'), { cwd: root, env: { ...process.env, REDIS_URL: redis.url, SIM_CONFIG: JSON.stringify(config) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.push(shop);
  const { port } = await once(shop, 'ready');
  const t0 = Date.now() + 300;
  const shoppers = fork(join(here, 'sim', 'shoppers.mjs'), { cwd: root, env: { ...process.env, SHOP_PORT: String(port), SIM_CONFIG: JSON.stringify(config), SIM_T0: String(t0) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.push(shoppers);
  await new Promise((r) => setTimeout(r, t0 - Date.now()));
  shop.send({ type: 'start', t0 });
  const shoppersDone = once(shoppers, 'result');
  shoppers.send({ type: 'go' });

  // Redis commands per second, from Redis' own counters.
  const redisSeries = [];
  let previous = { at: Date.now(), stats: await commandStats(monitor) };
  let done = false;
  const sampler = (async () => {
    while (!done) {
      await new Promise((r) => setTimeout(r, 1000));
      const at = Date.now();
      const stats = await commandStats(monitor);
      const diff = {};
      for (const [cmd, v] of Object.entries(stats)) diff[cmd] = { calls: v.calls - (previous.stats[cmd]?.calls ?? 0) };
      const { scripts, all } = countCommands(diff);
      const seconds = (at - previous.at) / 1000;
      redisSeries.push({ t: (at - t0) / 1000, scriptCallsPerSecond: Math.round(scripts / seconds), commandsPerSecond: Math.round(all / seconds) });
      previous = { at, stats };
      const t = Math.round((at - t0) / 1000);
      if (t % 10 === 0) console.log(`  t=${t} s: Redis ${Math.round(all / seconds)} commands/s (${Math.round(scripts / seconds)} script calls/s)`);
    }
  })();
  const load = await shoppersDone;
  done = true;
  await sampler;
  shop.send({ type: 'stop' });
  const shopResult = await once(shop, 'result');

  // ---- checks
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
  const accounted = s.ordered + s.abandonedWaiting + s.leftWhenReady + s.vanishedWhenReady + s.stillWaitingAtEnd + s.orderFailed;
  const membersLost = load.lost.notEnteredWhileWaiting + (config.shoppers - accounted - s.unfinished);

  const series = shopResult.series.map((row) => {
    const t = Math.round(row.t);
    const http = load.series[t - 1] ?? load.series[t] ?? {};
    const r = redisSeries.find((x) => Math.round(x.t) === t) ?? {};
    return { ...row, t, polls: http.polls ?? 0, pollP50Ms: http.pollP50Ms ?? null, pollP99Ms: http.pollP99Ms ?? null, orderP99Ms: http.orderP99Ms ?? null, httpInFlightMax: http.httpInFlightMax ?? null, loadgenCpuPercent: http.loadgenCpuPercent ?? null, loadgenLagMaxMs: http.loadgenLagMaxMs ?? null, agentQueuedMax: http.agentQueuedMax ?? null, redisCommandsPerSecond: r.commandsPerSecond ?? null, redisScriptCallsPerSecond: r.scriptCallsPerSecond ?? null };
  });
  const busy = series.filter((row) => row.waiting > 0 && row.t >= 2);
  const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
  const maxOf = (key) => Math.max(...series.map((r) => r[key] ?? 0));
  const totalPolls = load.pollLatencyMs.count;
  const totalScriptCalls = redisSeries.reduce((a, r) => a + r.scriptCallsPerSecond, 0);
  const calls = shopResult.storeCalls;
  // The token bucket's promise: over any window of whole seconds, admissions <= rate x window + burst
  // (+ one second of rate for the bins' edges).
  let bucketExcess = -Infinity;
  const adm = series.map((r) => r.admissionsPerSecond);
  for (let i = 0; i < adm.length; i++) {
    let sum = 0;
    for (let k = i; k < adm.length; k++) {
      sum += adm[k];
      bucketExcess = Math.max(bucketExcess, sum - config.admitRatePerSecond * (k - i + 2) - config.admitRatePerSecond);
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
    admissionsPerSecondWhileWaiting: { mean: Math.round(mean(busy.map((r) => r.admissionsPerSecond)) ?? 0), max: Math.max(0, ...busy.map((r) => r.admissionsPerSecond)), configured: config.admitRatePerSecond, burst: config.admitRatePerSecond },
    secondsAtMaxActive: series.filter((r) => r.active !== null && r.active >= config.maxActive - 1).length,
    orders: shopResult.orders,
    ordersInDb: shopResult.ordersInDb,
    duplicateTokenOrders: shopResult.duplicateTokenOrders,
    membersLost,
    notEnteredWhileWaiting: load.lost.notEnteredWhileWaiting,
    fifoViolations: shopResult.fifo.outOfOrderAdmissions + shopResult.fifo.skippedStillWaiting + happensBeforeViolations,
    fifo: { ...shopResult.fifo, happensBeforeViolations, admitted: shopResult.admittedOrder.length },
    pollLatencyMs: load.pollLatencyMs,
    maxPollP99Ms: Math.max(...series.map((r) => r.pollP99Ms ?? 0)),
    polls: totalPolls,
    storeCalls: calls,
    pollStoreCallsPerPoll: totalPolls ? Number((((calls.position ?? 0) + (calls.queueSnapshot ?? 0)) / totalPolls).toFixed(4)) : null,
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

  // ---- charts
  const images = join(root, 'docs', 'images');
  mkdirSync(images, { recursive: true });
  const pts = (key) => series.map((r) => [r.t, r[key]]);
  const sub = `${config.shoppers.toLocaleString('en-US')} shoppers in ${config.arrivalSeconds} s; rate ${config.admitRatePerSecond}/s, maxActive ${config.maxActive}; 2 cores, loopback (${new Date().toISOString().slice(0, 10)})`;
  // One row per chart: series are [legend, key of the per-second sample, dash?]; `note` goes after the common subtitle.
  const chartTable = [
    { file: 'perf-sim-waiting.svg', title: 'Members waiting', yLabel: 'members', series: [['waiting', 'waiting']] },
    {
      file: 'perf-sim-tokens.svg',
      title: 'Tokens held and order transactions in flight',
      yLabel: 'members',
      series: [['READY', 'ready'], ['CLAIMED', 'claimed'], ['READY + CLAIMED', 'active', '4 3']],
      hLines: [{ y: config.maxActive, label: `maxActive ${config.maxActive}`, color: '#dc2626' }],
    },
    {
      file: 'perf-sim-orders.svg',
      title: 'Order transactions in flight (claim to consume/release, max per second)',
      note: 'SQLite commits synchronously: at most one DB transaction at a time',
      yLabel: 'requests',
      series: [['order transactions in flight', 'maxOrdersInFlight'], ['CLAIMED (sampled)', 'claimed']],
    },
    {
      file: 'perf-sim-rates.svg',
      title: 'Admissions and orders per second',
      yLabel: 'per second',
      series: [['admissions/s', 'admissionsPerSecond'], ['orders/s', 'ordersPerSecond']],
      hLines: [{ y: config.admitRatePerSecond, label: `admitRatePerSecond ${config.admitRatePerSecond}`, color: '#dc2626' }],
    },
    { file: 'perf-sim-latency.svg', title: 'Poll latency (GET /queue/position over HTTP)', yLabel: 'ms', series: [['p99', 'pollP99Ms'], ['p50', 'pollP50Ms']] },
    {
      file: 'perf-sim-redis.svg',
      title: 'Redis load vs HTTP polls',
      yLabel: 'per second',
      series: [['HTTP polls/s', 'polls'], ['Redis commands/s (incl. inside scripts)', 'redisCommandsPerSecond'], ['Redis script calls/s', 'redisScriptCallsPerSecond']],
    },
  ];
  const charts = Object.fromEntries(
    chartTable.map(({ file, title, note, yLabel, series: lines, hLines }) => [
      file,
      lineChart({ title, subtitle: note ? `${sub}; ${note}` : sub, yLabel, series: lines.map(([name, key, dash]) => ({ name, points: pts(key), dash })), hLines }),
    ]),
  );
  for (const [file, svg] of Object.entries(charts)) writeFileSync(join(images, file), svg);

  const result = {
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, redis: redisVersion, loadAverage: os.loadavg().map((v) => Number(v.toFixed(2))) },
    config,
    summary,
    series,
    charts: Object.keys(charts).map((f) => `docs/images/${f}`),
    seconds: Math.round((performance.now() - started) / 1000),
  };
  mkdirSync(join(here, 'results'), { recursive: true });
  writeFileSync(join(here, 'results', 'simulate-latest.json'), `${JSON.stringify(result, null, 2)}\n`);

  const ok = (b) => (b ? 'OK ' : 'NOT OK');
  console.log(`\nFlash crowd: ${config.shoppers.toLocaleString('en-US')} shoppers in ${config.arrivalSeconds} s, ran ${summary.durationSeconds} s${summary.stoppedByDeadline ? ' (stopped by the time limit)' : ''}`);
  console.log(`  outcome: ${s.ordered} ordered, ${s.abandonedWaiting} gave up waiting, ${s.leftWhenReady} left when READY, ${s.vanishedWhenReady} vanished when READY, ${s.stillWaitingAtEnd} still waiting at the end, ${s.orderFailed} orders failed or cut off by the time limit`);
  console.log(`  ${ok(summary.maxOrderTransactionsInFlight <= config.maxActive)} max order transactions in flight ${summary.maxOrderTransactionsInFlight} (DB transactions at once: ${summary.maxDbTransactionsInFlight}); max tokens held ${summary.maxActiveSampled} vs maxActive ${config.maxActive}`);
  console.log(`  ${ok(summary.admissionsOverBucketBound === 0)} admissions/s while members waited: mean ${summary.admissionsPerSecondWhileWaiting.mean}, max ${summary.admissionsPerSecondWhileWaiting.max} (configured ${config.admitRatePerSecond}/s, burst ${config.admitRatePerSecond}); over any window <= rate x window + burst: exceeded by ${summary.admissionsOverBucketBound}; ${summary.secondsAtMaxActive} s at maxActive`);
  console.log(`  ${ok(summary.membersLost === 0)} members lost: ${summary.membersLost}`);
  console.log(`  ${ok(summary.fifoViolations === 0)} FIFO violations: ${summary.fifoViolations} (${summary.fifo.admitted} admissions checked)`);
  console.log(`  ${ok(summary.duplicateTokenOrders === 0)} orders ${summary.orders} (in DB ${summary.ordersInDb}), two orders on one token: ${summary.duplicateTokenOrders}`);
  console.log(`  polls: ${totalPolls.toLocaleString('en-US')}, latency p50 ${summary.pollLatencyMs.p50?.toFixed(1)} ms, p99 ${summary.pollLatencyMs.p99?.toFixed(1)} ms (worst second p99 ${summary.maxPollP99Ms.toFixed(1)} ms); max ${summary.maxPollsPerSecond} polls/s`);
  console.log(`  Redis: max ${summary.maxRedisCommandsPerSecond} commands/s, max ${summary.maxRedisScriptCallsPerSecond} script calls/s; polls cost ${summary.pollStoreCallsPerPoll} store calls each (${calls.position ?? 0} position + ${calls.queueSnapshot ?? 0} snapshots for ${totalPolls} polls); all script calls / polls ${summary.redisScriptCallsPerPoll}`);
  console.log(`  store calls: ${JSON.stringify(calls)}`);
  console.log(`  HTTP errors: ${JSON.stringify(summary.httpErrorsByStatus)}`);
  console.log(`wrote bench/results/simulate-latest.json and ${Object.keys(charts).map((f) => `docs/images/${f}`).join(', ')} (${result.seconds} s in all)`);
} finally {
  clearTimeout(hardStop);
  killChildren();
  await monitor.quit().catch(() => undefined);
  await redis.stop();
}
