#!/usr/bin/env node
// npm run simulate:bots (issue #26, SPEC §17): a bot swarm against the example shop, with and
// without the gate before the line. Each scenario on its own redis-server (spawned here), the
// shop in its own process (bench/sim/shop.mjs: examples/express-shop createShop with `gate` and
// `identity`), the crowd in another (bench/sim/swarm.mjs: humans and bots, one process, keep-alive
// sockets per class); the scenarios one after the other, the same seeded crowd in each.
//
// Default: 5,000 humans and 50,000 bots arriving over 10 s; the queue admits 150/s (the
// bottleneck: maxActive 5,000 never binds); each scenario runs 40 s from the first arrival.
// Scenarios: humans only (the reference), no gate, no gate + identity limit, powGate with bots
// that do not solve, powGate with bots solving on a farm (SIM_BOT_HASH_RATE hashes/s for the whole
// swarm, default 10 M), and that with the identity limit. The identity scenarios run only where
// the queue routes accept `identity` (feature-detected by the shop; reported either way).
// Reports per scenario: humans' share of admissions, humans admitted, their median wait (enter ->
// admission; a human still waiting at the end counts the time waited so far + rank / rate), the
// Redis commands of the run (INFO commandstats delta) and the store calls per client class.
// Writes bench/results/simulate-bots-latest.json and docs/images/perf-sim-bots-*.svg (with
// SIM_OUT set: only the result JSON, there).
//
// --short: 200 humans and 2,000 bots over 2 s, rate 20/s, 10 s per scenario (a tenth of the proof-of-work), three scenarios
// (no gate; powGate, bots do not solve; powGate, bots solve); writes only the result JSON, to
// SIM_OUT or <tmpdir>/waitgate-simulate-bots-short.json (run by test/bench/simulate-bots-short.test.ts).
//
//   npm run build && npm run simulate:bots
//   SIM_BOT_HASH_RATE=100000000 npm run simulate:bots     (a bigger farm)
//   SIM_SCENARIOS=no-gate,gate SIM_BOTS=20000 npm run simulate:bots   (some scenarios, a smaller swarm)
// Also SIM_HUMANS, SIM_HORIZON_SECONDS, SIM_RATE, SIM_SEED, SIM_BOT_ACCOUNTS.

import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startBenchRedisServer } from '../scripts/redis-server.mjs';
import { forkChild, messageOf } from './lib/ipc.mjs';
import { loadAverage, machineInfo } from './lib/machine.mjs';
import { createProgress } from './lib/progress.mjs';
import { commandStats, countCommands, diffStats } from './lib/redis-info.mjs';
import { botCharts, figuresOf } from './sim/bots-figures.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const short = process.argv.includes('--short');
const env = (name, fallback) => (process.env[name] ? Number(process.env[name]) : fallback);

const size = short
  ? // The smoke run checks what the gate does, not how long solving takes: a tenth of the work, so
    // humans finish solving well inside its 10 s even on a loaded CI machine (with the full work,
    // up to 10 s each at a high pressure, a loaded run once admitted no human in 8 s).
    { humans: 200, bots: 2000, arrivalSeconds: 2, horizonSeconds: 10, admitRatePerSecond: 20, clientsPerSocket: 10, powScale: 5_000 }
  : { humans: 5000, bots: 50_000, arrivalSeconds: 10, horizonSeconds: 40, admitRatePerSecond: 150, clientsPerSocket: 50, powScale: 50_000 };
const base = {
  ...size,
  humans: env('SIM_HUMANS', size.humans),
  bots: env('SIM_BOTS', size.bots),
  horizonSeconds: env('SIM_HORIZON_SECONDS', size.horizonSeconds),
  admitRatePerSecond: env('SIM_RATE', size.admitRatePerSecond),
  seed: env('SIM_SEED', 26),
  // One connection per clientsPerSocket clients of a class: when the shop is the bottleneck (it
  // is, at full size on 2 cores), each class is served in proportion to its clients, not to
  // sockets chosen for it.
  clientsPerSocket: env('SIM_CLIENTS_PER_SOCKET', size.clientsPerSocket),
  // The queue (bench/sim/shop.mjs): the rate is the bottleneck.
  maxActive: 5000,
  admitIntervalMs: 250,
  entryTokenTtlSeconds: 30,
  claimTtlSeconds: 15,
  positionCache: true,
  stock: 1_000_000,
  countByClass: true,
  // The work of a challenge (bench/sim/swarm.mjs): the gate asks difficulty × pressure (at most
  // 20×) of powScale; a browser does humanHashesPerSecond (powGate's default of 50,000 takes it
  // at most half a second, as docs/fair-entry.md says), the bots' farm botHashesPerSecond in all.
  humanHashesPerSecond: 100_000,
  botHashesPerSecond: env('SIM_BOT_HASH_RATE', 10_000_000),
  // The bots: retry a refused enter after 250-750 ms, poll every 250-750 ms, 50 shared accounts.
  botRetryMs: 500,
  botPollMs: 500,
  botAccounts: env('SIM_BOT_ACCOUNTS', 50),
};
const GATE = { hmacKey: 'simulate-bots-hmac-key-0123456789', difficulty: 1 }; // × powScale: powGate's default 50,000
const SCENARIOS = [
  { key: 'humans-only', label: 'humans only', bots: 0 },
  { key: 'no-gate', label: 'no gate' },
  { key: 'no-gate-identity', label: 'no gate + identity', identity: true },
  { key: 'gate', label: 'powGate' },
  { key: 'gate-solving', label: 'powGate, bots solve', botsSolve: true },
  { key: 'gate-solving-identity', label: 'powGate, bots solve + id', botsSolve: true, identity: true },
].map((s) => ({ gate: s.key.startsWith('gate'), botsSolve: false, identity: false, ...s }));
const SHORT = new Set(['no-gate', 'gate', 'gate-solving']);
const only = process.env.SIM_SCENARIOS?.split(',');
const scenarios = SCENARIOS.filter((s) => (only ? only.includes(s.key) : !short || SHORT.has(s.key)));

const started = performance.now();
const progress = createProgress({ steps: [...scenarios.map((s) => s.key), 'report'] });
const log = (line) => progress.log(line);
const children = [];
const killChildren = () => children.forEach((c) => c.exitCode === null && c.kill('SIGKILL'));
process.once('exit', killChildren);
const hardStop = setTimeout(
  () => {
    console.error('simulate:bots: hard time limit reached, stopping');
    killChildren();
    process.exit(1);
  },
  scenarios.length * (base.horizonSeconds + 60) * 1000,
);
hardStop.unref();

/** One scenario from a fresh redis-server to the shop's and the swarm's results; null when its identity limit is unsupported. */
async function runScenario(scenario) {
  const config = {
    ...base,
    bots: scenario.bots ?? base.bots,
    botsSolve: scenario.botsSolve,
    gate: scenario.gate ? GATE : null,
    identityHeader: scenario.identity ? 'x-account' : null,
  };
  const redis = await startBenchRedisServer();
  const monitor = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  try {
    const shop = forkChild(join(here, 'sim', 'shop.mjs'), { REDIS_URL: redis.url, SIM_CONFIG: JSON.stringify(config) }, children);
    const ready = await messageOf(shop, 'ready');
    if (scenario.identity && ready.identity !== 'on') {
      shop.kill('SIGKILL');
      return { scenario, identity: ready.identity, skipped: true };
    }
    const swarm = forkChild(join(here, 'sim', 'swarm.mjs'), { SHOP_PORT: String(ready.port), SIM_CONFIG: JSON.stringify(config) }, children);
    await messageOf(swarm, 'ready');
    const before = await commandStats(monitor);
    const loadBefore = loadAverage();
    const t0 = Date.now() + 300;
    shop.send({ type: 'start', t0 });
    const crowdDone = messageOf(swarm, 'result');
    swarm.send({ type: 'go', t0 });
    const crowd = await crowdDone;
    const shopDone = messageOf(shop, 'result');
    shop.send({ type: 'stop' });
    const shopResult = await shopDone;
    const redisCommands = countCommands(diffStats(before, await commandStats(monitor)));
    return { scenario, config, identity: ready.identity, t0, crowd, shopResult, redisCommands, loadAverage: { before: loadBefore, after: loadAverage() } };
  } finally {
    monitor.disconnect();
    await redis.stop();
  }
}

const pct = (v) => (v === null ? '-' : `${(v * 100).toFixed(1)}%`);
const sec = (v) => (v === null ? '-' : `${v.toFixed(1)} s`);

try {
  const machine = machineInfo();
  log(
    `simulate:bots${short ? ' --short' : ''}: ${base.humans.toLocaleString('en-US')} humans and ${base.bots.toLocaleString('en-US')} bots over ${base.arrivalSeconds} s, ${base.horizonSeconds} s per scenario; rate ${base.admitRatePerSecond}/s; powGate difficulty ${GATE.difficulty * base.powScale} (modelled), humans ${base.humanHashesPerSecond.toLocaleString('en-US')} hashes/s, bot farm ${base.botHashesPerSecond.toLocaleString('en-US')} hashes/s; bots share ${base.botAccounts} accounts; ${machine.cpus} cores, load ${machine.loadAverageAtStart.join(' ')}`,
  );
  const runs = [];
  for (const scenario of scenarios) {
    progress.step(scenario.key);
    const run = await runScenario(scenario);
    if (run.skipped) {
      log(`[${scenario.label}] skipped: the queue routes of this build do not accept \`identity\` (${run.identity})`);
      runs.push({ key: scenario.key, label: scenario.label, skipped: true, identity: run.identity });
      continue;
    }
    const f = figuresOf(run);
    runs.push(f);
    log(
      `[${scenario.label}] identity ${f.identity}: admissions ${f.admissions.total} (humans ${f.admissions.humans}, bots ${f.admissions.bots}): humans' share ${pct(f.humansShare)}; humans admitted ${f.humansAdmitted} of ${f.humans}, median wait ${sec(f.humansMedianWaitSeconds)} (admitted only ${sec(f.humansMedianWaitAdmittedSeconds)}), median solve ${sec(f.humansMedianSolveSeconds)}`,
    );
    log(
      `    Redis: ${f.redis.commands.toLocaleString('en-US')} commands (${f.redis.scriptCalls.toLocaleString('en-US')} script calls); store calls humans ${f.storeCalls.humans}, bots ${f.storeCalls.bots} (${pct(f.storeCalls.botsShare)}), shared ${f.storeCalls.shared}; requests humans ${f.requests.humans}, bots ${f.requests.bots} (${JSON.stringify(f.requests.botsByStatus)}); bots entered ${f.bots.entered}, solved ${f.bots.solved}`,
    );
    log(
      `    load ${f.loadAverage.before.join(' ')} -> ${f.loadAverage.after.join(' ')}; swarm CPU ${f.swarm.cpuSeconds.toFixed(1)} s, lag max ${f.swarm.eventLoopLagMaxMs} ms, queued for a socket max ${JSON.stringify(f.swarm.agentQueuedMax)}, RSS ${f.swarm.rssMiB} MiB; shop CPU ${f.shopCpuSeconds.toFixed(1)} s`,
    );
  }
  progress.step('report');
  const date = new Date().toISOString();
  const charts = short || process.env.SIM_OUT ? {} : botCharts({ runs, base, date });
  for (const [file, svg] of Object.entries(charts)) writeFileSync(join(here, '..', 'docs', 'images', file), svg);
  const result = {
    date,
    machine,
    short,
    base,
    gate: GATE,
    runs,
    charts: Object.keys(charts).map((f) => `docs/images/${f}`),
    seconds: Math.round((performance.now() - started) / 1000),
  };
  const out = process.env.SIM_OUT ?? (short ? join(os.tmpdir(), 'waitgate-simulate-bots-short.json') : join(here, 'results', 'simulate-bots-latest.json'));
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  log(`wrote ${out}${result.charts.length ? ` and ${result.charts.join(', ')}` : ''} (${result.seconds} s in all; load average ${loadAverage().join(' ')})`);
} finally {
  progress.end();
  clearTimeout(hardStop);
  killChildren();
}
