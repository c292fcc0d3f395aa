#!/usr/bin/env node
// npm run bench: waitgate against the naive design and the raw-Redis floor, memory per
// member, admit() scaling, polling at scale, and group commit (enter, exact position and
// claim at concurrency 1 to 1,024, on and off; about 5 of its minutes). Spawns its own
// redis-server (never the one on 6379), prints a report and writes bench/results/latest.json.
//
//   npm run build && npm run bench
//   BENCH_ROUNDS=5 BENCH_ROUND_MS=700 npm run bench      (defaults)
//   npm run bench -- --quick                              (a fast smoke run: 2 short rounds, 100k members)
//   npm run bench -- --only=micro,memory,polling,opening,polling-shuffle,passes,group-commit,streams
//   BENCH_STREAMS_SECONDS=20 BENCH_STREAMS_SIZES=1000,10000 (streams: event streams on one instance vs polling every 5 s)
//   node bench/run.mjs --only=passes --out=bench/results/passes-latest.json   (signed passes alone, ~40 s; BENCH_PASSES_ROUNDS=7 BENCH_PASSES_ROUND_MS=1000)
//   node bench/run.mjs --only=group-commit --out=bench/results/group-commit-latest.json   (group commit alone, ~5 min)
//   BENCH_GC_ROUNDS=7 BENCH_GC_ROUND_MS=600 BENCH_GC_CONCURRENCIES=1,64,256,1024 (group-commit; defaults)
//   npm run bench -- --only=opening --out=bench/results/opening-latest.json   (one section; --out keeps latest.json)
//   BENCH_POSITION_CACHE='{"refreshMs":100}' npm run bench -- --only=polling   (positionCache options)
//   BENCH_OPENING_MEMBERS=1000000 BENCH_OPENING_ROUNDS=5 (opening); BENCH_PREQUEUE_POLL_THROUGH=fresh|enter (polling-shuffle:
//   the polling phase on instances that learned the members after the opening, or on those their enters filled)

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startBenchRedisServer } from '../scripts/redis-server.mjs';
import { loadAverage, machineInfo } from './lib/machine.mjs';
import { checkTargets, printReport } from './lib/report.mjs';
import { createProgress } from './lib/progress.mjs';
import { barChart } from './lib/svg-chart.mjs';
import { runMemory } from './sections/memory.mjs';
import { runGroupCommit, runMicro } from './sections/micro.mjs';
import { runOpening } from './sections/opening.mjs';
import { runPolling } from './sections/polling.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const only = (args.find((a) => a.startsWith('--only='))?.slice(7) ?? 'micro,memory,polling,opening,polling-shuffle,passes,group-commit,streams').split(',');
const out = args.find((a) => a.startsWith('--out='))?.slice(6) ?? join(here, 'results', quick ? 'quick.json' : 'latest.json');
const num = (name, fallback) => (process.env[name] ? Number(process.env[name]) : fallback);

const started = performance.now();
const pkg = JSON.parse(readFileSync(join(here, '..', 'package.json'), 'utf8'));
const result = {
  date: new Date().toISOString(),
  waitgate: pkg.version,
  machine: machineInfo(),
};

// The sections in the order they run, and the key of each one's figures in the results.
const SECTIONS = { micro: 'micro', memory: 'memory', polling: 'polling', opening: 'opening', presence: 'presence', 'polling-shuffle': 'pollingShuffle', passes: 'passes', 'group-commit': 'groupCommit', streams: 'streams' };
const steps = Object.keys(SECTIONS).filter((name) => only.includes(name));
// How long each section took last time (the results this run will replace), for the remaining time.
const previous = existsSync(out) ? JSON.parse(readFileSync(out, 'utf8')) : {};
const expectedSeconds = Object.fromEntries(steps.flatMap((name) => (typeof previous[SECTIONS[name]]?.seconds === 'number' ? [[name, previous[SECTIONS[name]].seconds]] : [])));
const progress = createProgress({ steps, expectedSeconds });
const log = (line) => progress.log(line);
const redis = await startBenchRedisServer();
log(`waitgate bench: redis-server ${result.machine.redis} on port ${redis.port}, Node ${process.version}, ${result.machine.cpus} CPUs, load ${result.machine.loadAverageAtStart.join(' ')}`);
try {
  if (only.includes('micro')) {
    progress.step('micro');
    log('\n[1/5] per operation: waitgate vs naive vs floor');
    const t = performance.now();
    result.micro = await runMicro({ url: redis.url, rounds: num('BENCH_ROUNDS', quick ? 2 : 5), roundMs: num('BENCH_ROUND_MS', quick ? 300 : 700), warmMs: quick ? 150 : 300, log });
    result.micro.seconds = Math.round((performance.now() - t) / 1000);
  }
  if (only.includes('memory')) {
    progress.step('memory');
    log('\n[2/5] Redis memory per waiting member, admit() scaling');
    const t = performance.now();
    result.memory = await runMemory({ url: redis.url, sizes: quick ? [100_000] : [100_000, 1_000_000], log });
    result.memory.seconds = Math.round((performance.now() - t) / 1000);
  }
  if (only.includes('polling')) {
    progress.step('polling');
    log('\n[3/5] polling at scale (positionCache)');
    const t = performance.now();
    result.polling = await runPolling({ url: redis.url, members: num('BENCH_POLL_MEMBERS', 100_000), phaseSeconds: quick ? 8 : num('BENCH_POLL_SECONDS', 20), randomPhaseSeconds: quick ? 3 : 8, cacheOptions: process.env.BENCH_POSITION_CACHE ? JSON.parse(process.env.BENCH_POSITION_CACHE) : true, log });
    result.polling.seconds = Math.round((performance.now() - t) / 1000);
  }
  if (only.includes('opening')) {
    progress.step('opening');
    log('\n[4/5] a scheduled, shuffled opening: 1,000,000 pre-queued vs 10,000');
    const t = performance.now();
    result.opening = await runOpening({ url: redis.url, sizes: quick ? [10_000, 100_000] : [10_000, num('BENCH_OPENING_MEMBERS', 1_000_000)], rounds: num('BENCH_OPENING_ROUNDS', quick ? 2 : 5), redisPid: redis.process.pid, log });
    result.opening.seconds = Math.round((performance.now() - t) / 1000);
  }
  if (only.includes('presence')) {
    progress.step('presence');
    log('\n[presence] signs of life at scale (abandonAfterSeconds): touch calls, member ids recorded, Redis calls per poll');
    const t = performance.now();
    const { runPresence } = await import('./sections/presence.mjs');
    result.presence = await runPresence({ url: redis.url, sizes: quick ? [100_000] : [100_000, num('BENCH_PRESENCE_MEMBERS', 1_000_000)], phaseSeconds: quick ? 8 : num('BENCH_PRESENCE_SECONDS', 20), log });
    result.presence.seconds = Math.round((performance.now() - t) / 1000);
  }
  if (only.includes('polling-shuffle')) {
    progress.step('polling-shuffle');
    log('\n[5/5] polling after a shuffled opening (positionCache with drawn scores)');
    const t = performance.now();
    result.pollingShuffle = await runPolling({ url: redis.url, members: num('BENCH_POLL_MEMBERS', 100_000), phaseSeconds: quick ? 8 : num('BENCH_POLL_SECONDS', 20), randomPhaseSeconds: 0, cacheOptions: process.env.BENCH_POSITION_CACHE ? JSON.parse(process.env.BENCH_POSITION_CACHE) : true, preQueue: { shuffle: true, pollThrough: process.env.BENCH_PREQUEUE_POLL_THROUGH ?? 'fresh' }, log });
    result.pollingShuffle.seconds = Math.round((performance.now() - t) / 1000);
  }
  if (only.includes('passes')) {
    progress.step('passes');
    log('\n[passes] signed entry passes: forged passes rejected by the Express guard (signed vs opaque), Redis commands per rejection, verify cost, lifecycle throughput');
    const t = performance.now();
    const { runPasses } = await import('./sections/passes.mjs');
    result.passes = await runPasses({ url: redis.url, rounds: num('BENCH_PASSES_ROUNDS', quick ? 2 : 7), roundMs: num('BENCH_PASSES_ROUND_MS', quick ? 300 : 1000), log });
    result.passes.seconds = Math.round((performance.now() - t) / 1000);
  }
  if (only.includes('group-commit')) {
    progress.step('group-commit');
    log('\n[group commit] enter, exact position and claim at concurrency 1 to 1,024: group commit on / off vs naive vs floor vs shaped floor');
    const t = performance.now();
    result.groupCommit = await runGroupCommit({
      url: redis.url,
      rounds: num('BENCH_GC_ROUNDS', quick ? 2 : 7),
      roundMs: num('BENCH_GC_ROUND_MS', quick ? 300 : 600),
      warmMs: quick ? 150 : 300,
      concurrencies: process.env.BENCH_GC_CONCURRENCIES ? process.env.BENCH_GC_CONCURRENCIES.split(',').map(Number) : [1, 64, 256, 1024],
      log,
    });
    result.groupCommit.seconds = Math.round((performance.now() - t) / 1000);
  }
  if (only.includes('streams')) {
    progress.step('streams');
    log('\n[streams] event streams on one instance: delivery of an admission step, Redis commands, CPU vs polling every 5 s, memory');
    const t = performance.now();
    const { runStreams } = await import('./sections/streams.mjs');
    const sizes = process.env.BENCH_STREAMS_SIZES ? process.env.BENCH_STREAMS_SIZES.split(',').map(Number) : [1000, 10_000];
    result.streams = await runStreams({ url: redis.url, sizes, phaseSeconds: num('BENCH_STREAMS_SECONDS', quick ? 8 : 20), log });
    result.streams.seconds = Math.round((performance.now() - t) / 1000);
  }
} finally {
  progress.end();
  await redis.stop();
}
result.machine.loadAverageAtEnd = loadAverage();
result.seconds = Math.round((performance.now() - started) / 1000);
result.targets = checkTargets(result);
printReport(result, log);
if (result.micro && !quick) {
  // docs/images/perf-bench-ratios.svg: waitgate / naive and waitgate / floor per operation.
  const groups = [];
  const targets = {};
  for (const [op, byC] of Object.entries(result.micro.results)) {
    for (const [c, cell] of Object.entries(byC)) {
      const name = `${op} c${c}`;
      groups.push({ name, values: [cell.ratios['waitgate/naive'], cell.ratios['waitgate/floor']] });
      if (op === 'enter' && c === '64') targets[name] = 1.5;
      if (op === 'position') targets[name] = 2;
    }
  }
  const images = join(here, '..', 'docs', 'images');
  mkdirSync(images, { recursive: true });
  writeFileSync(
    join(images, 'perf-bench-ratios.svg'),
    barChart({
      title: 'waitgate throughput relative to the naive design and to one trivial EVALSHA',
      subtitle: `median of per-round ratios, ${result.micro.settings.rounds} rounds; ${result.machine.cpus} cores, Node ${result.machine.node}, Redis ${result.machine.redis}; ${result.date.slice(0, 10)}; dashes: target vs naive`,
      groups,
      seriesNames: ['waitgate / naive', 'waitgate / floor'],
      unit: 'x',
      targets,
    }),
  );
  result.charts = ['docs/images/perf-bench-ratios.svg'];
}
if (result.groupCommit && !quick) {
  // docs/images/perf-bench-group-commit.svg: waitgate (group commit on / off) / the one-call floor per operation and concurrency.
  const groups = [];
  const targets = {};
  for (const [op, byC] of Object.entries(result.groupCommit.results)) {
    for (const [c, cell] of Object.entries(byC)) {
      const name = `${op} c${c}`;
      groups.push({ name, values: [cell.ratios['waitgate/floor'], cell.ratios['waitgate gc off/floor']] });
      if (op === 'enter' && c === '256') targets[name] = 2;
      if (op === 'enter' && c === '64') targets[name] = 1.3;
      if (op === 'position' && c === '256') targets[name] = 2;
    }
  }
  const images = join(here, '..', 'docs', 'images');
  mkdirSync(images, { recursive: true });
  writeFileSync(
    join(images, 'perf-bench-group-commit.svg'),
    barChart({
      title: 'Group commit: waitgate throughput relative to one trivial EVALSHA per call',
      subtitle: `median of per-round ratios, ${result.groupCommit.settings.rounds} rounds; ${result.machine.cpus} cores, Node ${result.machine.node}, Redis ${result.machine.redis}; ${result.date.slice(0, 10)}; dashes: targets`,
      groups,
      seriesNames: ['group commit on (default) / floor', 'group commit off / floor'],
      unit: 'x',
      targets,
    }),
  );
  (result.charts ??= []).push('docs/images/perf-bench-group-commit.svg');
}
if (result.streams && !quick) {
  // docs/images/perf-bench-streams.svg: the section's two ratios against their goals.
  const images = join(here, '..', 'docs', 'images');
  mkdirSync(images, { recursive: true });
  const r = result.streams.ratios;
  writeFileSync(
    join(images, 'perf-bench-streams.svg'),
    barChart({
      title: 'Event streams on one instance: ratios of one run',
      subtitle: `${Math.max(...result.streams.settings.sizes)} streams, a step a second; ${result.machine.cpus} cores, Node ${result.machine.node}, load ${result.machine.loadAverageAtStart[0]}; ${result.date.slice(0, 10)}; dashes: goals`,
      groups: [
        { name: 'Redis cmds/s 10k / 1k streams', values: [r['redis commands/s, most/fewest streams']] },
        { name: 'CPU/member-min streams / polling', values: [r['cpu per member-minute, streams/polling 5 s']] },
      ],
      seriesNames: ['ratio'],
      unit: 'x',
      targets: { 'Redis cmds/s 10k / 1k streams': 1, 'CPU/member-min streams / polling': 0.2 },
    }),
  );
  (result.charts ??= []).push('docs/images/perf-bench-streams.svg');
}
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
log(`\nwrote ${out} (${result.seconds} s in all)`);
