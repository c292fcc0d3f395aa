#!/usr/bin/env node
// The crowd at scale (issue 14): 1,000,000 members enter one queue on one redis-server
// as fast as several Node processes can send through WaitingQueue.enter (RedisStore,
// group commit as the build's default), then every one of them polls at its hinted
// interval (5 s beyond rank 1,000) through positionCache, while one instance admits.
//
//   redis-server (spawned here, noeviction, no persistence)
//     <- P app instances (bench/crowd/instance.mjs, one Node process each: a WaitingQueue
//        with positionCache on its own ioredis client; member m<i> lives on instance i % P)
//     <- this coordinator (INFO cpu / memory / commandstats every second, rank samples)
//
// Reports: time to absorb the crowd, entries/s, Redis CPU (share of one core), Redis
// peak memory; then polls/s reached, Redis CPU while polling, store calls and Redis script
// calls per poll, reported rank vs ZRANK (sampled every 5 s), memory of the Node processes.
// Writes bench/results/crowd-million-latest.json and docs/images/perf-crowd-million-*.svg
// (a crowd of another size: bench/results/crowd-<N>-latest.json, no charts unless --charts).
//
//   npm run build && node bench/crowd-million.mjs                 (~2 min on 2 cores)
//   node bench/crowd-million.mjs --abandon-after=off              (abandonment off: the polls alone;
//                                                                  bench/results/crowd-million-abandon-off-latest.json, charts -abandon-off)
//   node bench/crowd-million.mjs --members=50000 --poll-seconds=20  (a quick look)
//   Options (or environment): --members= (CROWD_MEMBERS, 1000000), --processes= (CROWD_PROCESSES, 3),
//   --enter-concurrency= (per process, CROWD_ENTER_CONCURRENCY, 512), --poll-seconds= (CROWD_POLL_SECONDS, 60),
//   --admit-rate= (CROWD_ADMIT_RATE, 500), --admit-interval-ms= (CROWD_ADMIT_INTERVAL_MS, 100),
//   --sample= (members compared every 5 s, half uniform, half near the head; CROWD_SAMPLE, 2000),
//   --refresh-ms= (positionCache.refreshMs, CROWD_REFRESH_MS, the library default),
//   --exact-below-rank= (positionCache.exactBelowRank, CROWD_EXACT_BELOW_RANK, the library default),
//   --abandon-after= (abandonAfterSeconds: a number, 'default' (300) or 'off'; CROWD_ABANDON_AFTER, default),
//   --subscriber=off (no RedisStore subscriber: estimates from the pace of the head; CROWD_SUBSCRIBER, on),
//   --out=path, --charts (write the charts whatever the size), --no-charts, --replot (the charts again from --out)

import { fork } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startBenchRedisServer } from '../scripts/redis-server.mjs';
import { loadAverage, machineInfo } from './lib/machine.mjs';
import { commandStats, countCommands, diffStats, redisProcessCpuUs } from './lib/redis-info.mjs';
import { mean, quantileSorted, round } from './lib/stats.mjs';
import { createProgress } from './lib/progress.mjs';
import { lineChart } from './lib/svg-chart.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const args = process.argv.slice(2);
const arg = (name, envName, fallback) => {
  const a = args.find((x) => x.startsWith(`--${name}=`))?.slice(name.length + 3) ?? process.env[envName];
  return a === undefined || a === '' ? fallback : a;
};
const N = Number(arg('members', 'CROWD_MEMBERS', 1_000_000));
const P = Number(arg('processes', 'CROWD_PROCESSES', 3));
const enterConcurrency = Number(arg('enter-concurrency', 'CROWD_ENTER_CONCURRENCY', 512));
const pollSeconds = Number(arg('poll-seconds', 'CROWD_POLL_SECONDS', 60));
const admitRate = Number(arg('admit-rate', 'CROWD_ADMIT_RATE', 500));
const admitIntervalMs = Number(arg('admit-interval-ms', 'CROWD_ADMIT_INTERVAL_MS', 100));
const sampleSize = Number(arg('sample', 'CROWD_SAMPLE', 2000));
const refreshMs = arg('refresh-ms', 'CROWD_REFRESH_MS', undefined);
const exactBelowRank = arg('exact-below-rank', 'CROWD_EXACT_BELOW_RANK', undefined);
// The library's default (abandonAfterSeconds 300: signs of life near the head) unless told
// otherwise; --abandon-after=off measures the polls alone.
const abandonAfter = arg('abandon-after', 'CROWD_ABANDON_AFTER', 'default');
// Each instance gives its RedisStore a subscriber (the pushes of admission steps), as the
// README recommends with positionCache, unless told otherwise.
const subscribe = arg('subscriber', 'CROWD_SUBSCRIBER', 'on') !== 'off';
const million = N === 1_000_000;
// A run with other options than the defaults gets its own files: -abandon-300, -refresh-50, ...
const variant = [
  abandonAfter === 'default' ? '' : `-abandon-${abandonAfter}`,
  refreshMs === undefined ? '' : `-refresh-${refreshMs}`,
  exactBelowRank === undefined ? '' : `-exact-${exactBelowRank}`,
  subscribe ? '' : '-no-subscriber',
  process.argv.some((a) => a.startsWith('--admit-interval-ms=')) || process.env.CROWD_ADMIT_INTERVAL_MS ? `-admit-every-${admitIntervalMs}ms` : '',
].join('');
const out = arg('out', 'CROWD_OUT', join(here, 'results', `crowd-${million ? 'million' : N}${variant}-latest.json`));
const charts = (million && !args.includes('--no-charts')) || args.includes('--charts');
const SAMPLE_EVERY_MS = 5000;
const NAME = 'crowd';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// A progress line per phase (a bar redrawn on a terminal): bench/lib/progress.mjs.
const progress = createProgress({ steps: ['start', 'idle', 'enter', 'poll', 'stop'] });
const log = (line) => progress.log(line);
const fmt = (v, d = 0) =>
  v === null || v === undefined || Number.isNaN(v) ? '-' : Number(v).toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

const queueOptions = {
  admitRatePerSecond: admitRate,
  operationTimeoutMs: 10_000, // a loaded 2-core machine must not turn slow calls into errors
  positionCache: {
    maxMembers: Math.ceil(N / P) + 1000, // every instance remembers all of its members
    ...(refreshMs === undefined ? {} : { refreshMs: Number(refreshMs) }),
    ...(exactBelowRank === undefined ? {} : { exactBelowRank: Number(exactBelowRank) }),
  },
  ...(abandonAfter === 'default' ? {} : { abandonAfterSeconds: abandonAfter === 'off' ? null : Number(abandonAfter) }),
};

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const started = performance.now();
const result = {
  date: new Date().toISOString(),
  waitgate: pkg.version,
  machine: machineInfo(),
  settings: {
    members: N,
    processes: P,
    enterConcurrencyPerProcess: enterConcurrency,
    pollSeconds,
    admitRatePerSecond: admitRate,
    admitIntervalMs,
    subscriber: subscribe,
    samplePerRound: sampleSize,
    sampleEveryMs: SAMPLE_EVERY_MS,
    jitter: 0.2,
    queueOptions,
  },
};

if (args.includes('--replot')) {
  // The charts again from the results of the last run with these options.
  const last = JSON.parse(readFileSync(out, 'utf8'));
  console.log(`wrote ${writeCharts(last).join(', ')} from ${out}`);
  process.exit(0);
}

const redis = await startBenchRedisServer();
const control = new Redis(redis.url, { maxRetriesPerRequest: 1 });
const instances = [];
log(
  `crowd-million: ${N.toLocaleString('en-US')} members, ${P} app processes, redis-server ${result.machine.redis} on port ${redis.port} (pid ${redis.process.pid}), ${result.machine.cpus} CPUs, load ${result.machine.loadAverageAtStart.join(' ')}`,
);

/** The next message of `type` from an instance (a 'failed' message or an exit rejects). */
function next(child, type) {
  return new Promise((resolve, reject) => {
    const onMessage = (m) => {
      if (m.type === type) {
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(m);
      } else if (m.type === 'failed') {
        child.off('message', onMessage);
        child.off('exit', onExit);
        reject(new Error(`instance failed: ${m.error}`));
      }
    };
    const onExit = (code) => reject(new Error(`instance exited (${code}) before "${type}"`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

// ---------- Redis, once a second: CPU (INFO cpu), memory, the line's length, script calls.
const series = [];
let phase = 'start';
progress.step(phase);
let sampling = true;
const sampler = (async () => {
  let prev = { at: performance.now(), cpuUs: await redisProcessCpuUs(control), stats: await commandStats(control) };
  while (sampling) {
    await sleep(1000);
    const at = performance.now();
    const [cpuUs, memText, waiting, stats] = await Promise.all([
      redisProcessCpuUs(control),
      control.info('memory'),
      control.zcard(`{waitgate:${NAME}}:waiting`),
      commandStats(control),
    ]);
    const mem = (k) => Number(new RegExp(`^${k}:(\\d+)`, 'm').exec(memText)?.[1]);
    const { scripts, all } = countCommands(diffStats(prev.stats, stats));
    series.push({
      t: round((at - started) / 1000, 2),
      phase,
      redisCpuShare: round((cpuUs - prev.cpuUs) / 1000 / (at - prev.at), 4),
      usedMemory: mem('used_memory'),
      usedMemoryPeak: mem('used_memory_peak'),
      waiting,
      scriptCallsPerSecond: round((scripts * 1000) / (at - prev.at), 0),
      commandsPerSecond: round((all * 1000) / (at - prev.at), 0),
    });
    prev = { at, cpuUs, stats };
  }
})();

const redisWindow = async () => ({ at: performance.now(), cpuUs: await redisProcessCpuUs(control), stats: await commandStats(control) });
const closeWindow = async (w) => {
  const end = await redisWindow();
  const seconds = (end.at - w.at) / 1000;
  const { scripts, all } = countCommands(diffStats(w.stats, end.stats));
  const byCommand = Object.fromEntries(
    Object.entries(diffStats(w.stats, end.stats))
      .sort((x, y) => y[1].usec - x[1].usec)
      .map(([cmd, v]) => [cmd, { callsPerSecond: round(v.calls / seconds, 1), usecPerSecond: round(v.usec / seconds, 0) }]),
  );
  return {
    seconds,
    redisCpuUs: end.cpuUs - w.cpuUs,
    redisCpuShare: (end.cpuUs - w.cpuUs) / 1000 / (end.at - w.at),
    scriptCalls: scripts,
    commands: all,
    byCommand,
  };
};
const memoryInfo = async () => {
  const text = await control.info('memory');
  const get = (k) => Number(new RegExp(`^${k}:(\\d+)`, 'm').exec(text)?.[1]);
  return { usedMemory: get('used_memory'), usedMemoryPeak: get('used_memory_peak'), usedMemoryRss: get('used_memory_rss') };
};

try {
  await control.flushall();
  const memoryBefore = await memoryInfo();
  for (let index = 0; index < P; index++) {
    const child = fork(join(here, 'crowd', 'instance.mjs'), [], {
      env: {
        ...process.env,
        CROWD_INSTANCE: JSON.stringify({ index, processes: P, members: N, url: redis.url, name: NAME, queueOptions, admitIntervalMs, jitter: 0.2, subscribe }),
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: ['--expose-gc'], // memory figures after a full GC
    });
    instances.push({ child, ready: next(child, 'ready') });
  }
  const ready = await Promise.all(instances.map((i) => i.ready));
  result.settings.positionCache = ready[0].positionCache;
  result.nodeMemoryAtStart = ready.map((r) => r.memory);
  log(`  ${P} instances ready (positionCache ${JSON.stringify(ready[0].positionCache)})`);

  // Redis idle (this coordinator's INFO calls and Redis' own timers): the floor under every figure below.
  phase = 'idle';
  progress.step(phase);
  const idleWindow = await redisWindow();
  await sleep(3000);
  result.idleRedisCpuShare = round((await closeWindow(idleWindow)).redisCpuShare, 4);

  // ---------- 1. The crowd enters.
  phase = 'enter';
  progress.step(phase);
  const enterWindow = await redisWindow();
  const entered = await Promise.all(
    instances.map(({ child }) => {
      const done = next(child, 'entered');
      child.send({ type: 'enter', concurrency: enterConcurrency });
      return done;
    }),
  );
  const enterRedis = await closeWindow(enterWindow);
  const afterEnter = await memoryInfo();
  const waitingAfterEnter = await control.zcard(`{waitgate:${NAME}}:waiting`);
  const enterCalls = entered.reduce((a, e) => a + e.storeCalls.enter, 0);
  result.enter = {
    seconds: round(enterRedis.seconds, 2),
    entriesPerSecond: round(N / enterRedis.seconds, 0),
    waiting: waitingAfterEnter,
    redisCpuShare: round(enterRedis.redisCpuShare, 3),
    redisCpuUsPerEntry: round(enterRedis.redisCpuUs / N, 2),
    redisScriptCalls: enterRedis.scriptCalls,
    membersPerScriptCall: round(N / Math.max(1, enterRedis.scriptCalls), 1),
    storeEnterCalls: enterCalls,
    redisMemory: {
      before: memoryBefore.usedMemory,
      after: afterEnter.usedMemory,
      peak: afterEnter.usedMemoryPeak,
      bytesPerMember: round((afterEnter.usedMemory - memoryBefore.usedMemory) / N, 1),
      rss: afterEnter.usedMemoryRss,
    },
    perInstance: entered.map(({ type, storeCalls, ...rest }) => rest),
  };
  // What each instance holds for its members after the enters (positionCache's entries), heap after a full GC.
  result.enter.nodeHeapBytesPerMember = entered.map((e, i) => round(((e.memory.heapUsedMB - ready[i].memory.heapUsedMB) * 2 ** 20) / e.members, 0));
  log(
    `  entered: ${fmt(waitingAfterEnter)} waiting in ${fmt(result.enter.seconds, 1)} s (${fmt(result.enter.entriesPerSecond)} entries/s); Redis CPU ${fmt(result.enter.redisCpuShare * 100, 1)}% of one core (${fmt(result.enter.redisCpuUsPerEntry, 2)} us per entry); ${fmt(result.enter.membersPerScriptCall, 1)} members per script call; used_memory ${fmt(afterEnter.usedMemory / 2 ** 20, 1)} MiB, peak ${fmt(afterEnter.usedMemoryPeak / 2 ** 20, 1)} MiB`,
  );
  log(
    `    per instance: ${entered.map((e, i) => `${fmt(e.entriesPerSecond)}/s, p50 ${e.latencyMs.p50} ms, p99 ${e.latencyMs.p99} ms, ${e.errors} retried, Node CPU ${fmt(e.nodeCpuShare * 100, 0)}%, rss ${e.memory.rssMB} MB, heap ${e.memory.heapUsedMB} MB (+${result.enter.nodeHeapBytesPerMember[i]} B per member)`).join(' | ')}`,
  );
  if (waitingAfterEnter !== N) throw new Error(`expected ${N} waiting, found ${waitingAfterEnter}`);

  // ---------- 2. Everyone polls through positionCache; instance 0 admits.
  await sleep(1000);
  phase = 'poll';
  progress.step(phase);
  const ticks = [];
  const onTick = (m) => m.type === 'tick' && ticks.push({ ...m, t: (performance.now() - started) / 1000 });
  for (const { child } of instances) child.on('message', onTick);
  const pollWindow = await redisWindow();
  const pollStart = performance.now();
  const polled = Promise.all(
    instances.map(({ child }, index) => {
      const done = next(child, 'polled');
      child.send({ type: 'poll', seconds: pollSeconds, admit: index === 0 });
      return done;
    }),
  );
  // Rank samples every 5 s: half uniform over the crowd, half among members last told a rank in [1,000, 50,000).
  const rounds = [];
  const samples = (async () => {
    for (let k = 1; performance.now() + SAMPLE_EVERY_MS < pollStart + pollSeconds * 1000; k++) {
      await sleep(pollStart + k * SAMPLE_EVERY_MS - performance.now());
      const per = Math.ceil(sampleSize / 2 / P);
      const replies = await Promise.all(
        instances.map(({ child }) => {
          const done = next(child, 'sampled');
          child.send({ type: 'sample', uniform: per, head: per, headFrom: 1000, headTo: 50_000 });
          return done;
        }),
      );
      rounds.push({ t: round((performance.now() - pollStart) / 1000, 1), rows: replies.flatMap((r) => r.rows) });
    }
  })();
  const polledAll = await polled;
  await samples;
  const pollRedis = await closeWindow(pollWindow);
  for (const { child } of instances) child.off('message', onTick);
  // The same comparison with admission stopped (the admitter stopped with the polls) and every
  // snapshot refreshed since: what is left is the estimate's own error, without the line's drift.
  await sleep(result.settings.positionCache.refreshMs + 200);
  const paused = await Promise.all(
    instances.map(({ child }) => {
      const done = next(child, 'sampled');
      const per = Math.ceil(sampleSize / 2 / P);
      child.send({ type: 'sample', uniform: per, head: per, headFrom: 1000, headTo: 50_000 });
      return done;
    }),
  );
  const waitingAfterPoll = await control.zcard(`{waitgate:${NAME}}:waiting`);
  const afterPoll = await memoryInfo();

  const sum = (f) => polledAll.reduce((a, p) => a + f(p), 0);
  const calls = (m) => sum((p) => p.storeCalls[m] ?? 0);
  const sampledPolls = rounds.reduce((a, r) => a + r.rows.length, 0);
  const polls = sum((p) => p.polls) + sampledPolls;
  const pollStoreCalls = calls('position') + calls('queueSnapshot') + calls('touch');
  const admitted = waitingAfterEnter - waitingAfterPoll;
  result.poll = {
    seconds: round(pollRedis.seconds, 1),
    polls,
    pollsPerSecond: round(polls / pollRedis.seconds, 0),
    targetPollsPerSecond: round(N / 5, 0),
    sampledPolls,
    // Polls that ran more than 1 s after they were due (the instance could not keep up).
    pollsLateOver1s: sum((p) => p.lateOver1s),
    pollErrors: sum((p) => p.errors),
    lastPollError: polledAll.find((p) => p.lastError)?.lastError ?? null,
    admitted,
    admittedPerSecond: round(admitted / pollRedis.seconds, 1),
    sawReady: sum((p) => p.ready),
    redisCpuShare: round(pollRedis.redisCpuShare, 4),
    storeCalls: { position: calls('position'), queueSnapshot: calls('queueSnapshot'), touch: calls('touch'), admit: calls('admit'), enter: calls('enter') },
    touchedIds: sum((p) => p.touchedIds),
    storeCallsPerPoll: round(pollStoreCalls / polls, 5),
    // Redis' count: EVALSHA calls in the phase minus the admit calls (counted in process). With group commit
    // one script call can carry several exact look-ups, so it can be below the store calls.
    redisScriptCallsPerPoll: round((pollRedis.scriptCalls - calls('admit')) / polls, 5),
    redisCommandsPerPoll: round(pollRedis.commands / polls, 4),
    // INFO commandstats over the phase: calls and usec per second by command (a script's usec include what it ran; the commands run inside scripts are listed too).
    redisCommandsPerSecond: pollRedis.byCommand,
    nodeCpuShare: polledAll.map((p) => p.nodeCpuShare),
    nodeMemory: polledAll.map((p) => p.memory),
    redisMemory: { used: afterPoll.usedMemory, peak: afterPoll.usedMemoryPeak },
    queueErrors: [...new Set(polledAll.flatMap((p) => p.queueErrors))],
  };
  result.poll.accuracy = accuracy(rounds);
  // Admissions between the snapshot a rank was estimated from and the ZRANK: the mean signed error over the rate, as time.
  result.poll.accuracy.impliedStalenessMs = round((result.poll.accuracy.rankAtLeast1000.meanSignedError / admitRate) * 1000, 0);
  result.poll.accuracyAdmissionStopped = accuracy([{ t: 0, rows: paused.flatMap((r) => r.rows) }]);
  delete result.poll.accuracyAdmissionStopped.rounds;
  result.redisPeakMemory = afterPoll.usedMemoryPeak;
  const a = result.poll.accuracy;
  log(
    `  polled ${pollSeconds} s: ${fmt(polls)} polls, ${fmt(result.poll.pollsPerSecond)}/s (target ${fmt(result.poll.targetPollsPerSecond)}/s), ${fmt(result.poll.pollsLateOver1s)} more than 1 s late; Redis CPU ${fmt(result.poll.redisCpuShare * 100, 2)}% of one core; ${fmt(result.poll.storeCallsPerPoll, 5)} store calls per poll (${result.poll.storeCalls.position} exact, ${result.poll.storeCalls.queueSnapshot} snapshots, ${result.poll.storeCalls.touch} touch), ${fmt(result.poll.redisScriptCallsPerPoll, 5)} Redis script calls per poll; ${fmt(admitted)} admitted`,
  );
  log(
    `    Node CPU per instance ${result.poll.nodeCpuShare.map((v) => `${fmt(v * 100, 0)}%`).join(', ')}; memory ${result.poll.nodeMemory.map((m) => `rss ${m.rssMB} MB / heap ${m.heapUsedMB} MB`).join(', ')}`,
  );
  log(
    `  ranks (reported vs ZRANK right after), rank >= 1,000: ${a.rankAtLeast1000.compared} compared, max ${fmt(a.rankAtLeast1000.maxRelError * 100, 3)}% (exact ${a.rankAtLeast1000.maxAt?.exact}, reported ${a.rankAtLeast1000.maxAt?.reported}), p99 ${fmt(a.rankAtLeast1000.p99RelError * 100, 3)}%, within 1%: ${fmt(a.rankAtLeast1000.within1Percent * 100, 2)}%`,
  );
  for (const [band, v] of Object.entries(a.byExactRank))
    log(
      `    exact rank ${band.padEnd(16)} ${String(v.compared).padStart(6)}: mean ${fmt(v.meanRelError * 100, 3)}%, p99 ${fmt(v.p99RelError * 100, 3)}%, max ${fmt(v.maxRelError * 100, 3)}%, mean signed ${fmt(v.meanSignedError, 1)} ranks; bracketed p99 ${fmt(v.bracketed.p99RelError * 100, 3)}%, max ${fmt(v.bracketed.maxRelError * 100, 3)}% (exact ${v.bracketed.maxAt?.exact}, reported ${v.bracketed.maxAt?.reported})`,
    );
  log(
    `    uniform sample only (rank >= 1,000): ${a.uniformRankAtLeast1000.compared} compared, max ${fmt(a.uniformRankAtLeast1000.maxRelError * 100, 3)}%, p99 ${fmt(a.uniformRankAtLeast1000.p99RelError * 100, 3)}%; status mismatches ${a.statusMismatches}; mean signed error ${fmt(a.rankAtLeast1000.meanSignedError, 1)} ranks = ${a.impliedStalenessMs} ms of admissions`,
  );
  const q = result.poll.accuracyAdmissionStopped;
  log(
    `  ranks with admission stopped (snapshots refreshed): ${q.rankAtLeast1000.compared} compared, max ${fmt(q.rankAtLeast1000.maxRelError * 100, 3)}%, p99 ${fmt(q.rankAtLeast1000.p99RelError * 100, 3)}% (rank >= 1,000); status mismatches ${q.statusMismatches}`,
  );

  result.targets = {
    [`crowd: Redis < 10% of one core while ${N.toLocaleString('en-US')} poll through positionCache`]: {
      value: result.poll.redisCpuShare,
      max: 0.1,
      met: result.poll.redisCpuShare < 0.1,
      members: N,
      pollsPerSecond: result.poll.pollsPerSecond,
    },
    'crowd: reported rank within 1% of ZRANK (max, rank >= 1,000)': {
      value: a.rankAtLeast1000.maxRelError,
      max: 0.01,
      met: a.rankAtLeast1000.maxRelError <= 0.01,
    },
    'crowd: reported rank within 1% of the ZRANKs read before and after the call (max, rank >= 1,000)': {
      value: a.rankAtLeast1000.bracketed.maxRelError,
      max: 0.01,
      met: a.rankAtLeast1000.bracketed.maxRelError <= 0.01,
    },
    'crowd: reported rank within 1% of ZRANK (p99, rank >= 1,000)': {
      value: a.rankAtLeast1000.p99RelError,
      max: 0.01,
      met: a.rankAtLeast1000.p99RelError <= 0.01,
    },
    'crowd: reported rank within 1% of ZRANK (p99, rank >= 1,000, uniform sample)': {
      value: a.uniformRankAtLeast1000.p99RelError,
      max: 0.01,
      met: a.uniformRankAtLeast1000.p99RelError <= 0.01,
    },
    'crowd: reported rank within 1% of ZRANK (max, rank >= 1,000, admission stopped)': {
      value: q.rankAtLeast1000.maxRelError,
      max: 0.01,
      met: q.rankAtLeast1000.maxRelError <= 0.01,
    },
  };
  log('\nTargets');
  for (const [name, v] of Object.entries(result.targets)) log(`  ${v.met ? 'MET    ' : 'NOT MET'}  ${name.padEnd(72)} ${v.value}`);

  // Per-second series of the poll phase, summed over the instances.
  const bySecond = new Map();
  for (const t of ticks) {
    const s = Math.floor((t.t * 1000 - (pollStart - started)) / 1000);
    const b = bySecond.get(s) ?? { polls: 0, exact: 0, snapshots: 0, touch: 0, maxLagMs: 0, nodeCpu: 0 };
    b.polls += t.polls;
    b.exact += t.calls.position ?? 0;
    b.snapshots += t.calls.queueSnapshot ?? 0;
    b.touch += t.calls.touch ?? 0;
    b.maxLagMs = Math.max(b.maxLagMs, t.maxLagMs);
    b.nodeCpu += t.nodeCpuShare;
    bySecond.set(s, b);
  }
  result.series = {
    redis: series,
    pollPerSecond: [...bySecond.entries()]
      .sort((x, y) => x[0] - y[0])
      .map(([s, b]) => ({ s, ...b, maxLagMs: round(b.maxLagMs, 0), nodeCpu: round(b.nodeCpu, 3) })),
    rankRounds: a.rounds,
  };
} finally {
  progress.step('stop');
  sampling = false;
  await sampler.catch(() => undefined);
  for (const { child } of instances) {
    if (child.exitCode === null) child.send({ type: 'stop' });
  }
  await Promise.all(instances.map(({ child }) => (child.exitCode === null ? new Promise((r) => child.once('exit', r)) : null)));
  await control.quit().catch(() => control.disconnect());
  await redis.stop();
  progress.end();
}

result.machine.loadAverageAtEnd = loadAverage();
result.seconds = Math.round((performance.now() - started) / 1000);
if (charts) result.charts = writeCharts(result);
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
log(`\nwrote ${out}${result.charts ? ` and ${result.charts.join(', ')}` : ''} (${result.seconds} s in all)`);

/** Reported vs exact ranks of every sample round. */
function accuracy(rounds) {
  const bands = [
    ['< 1,000 (exact path)', 0, 1000],
    ['1,000-9,999', 1000, 10_000],
    ['10,000-99,999', 10_000, 100_000],
    ['>= 100,000', 100_000, Infinity],
  ];
  let statusMismatches = 0;
  const all = [];
  for (const r of rounds) {
    for (const row of r.rows) {
      if (row.status !== 'WAITING' || row.exact === null) {
        // Admitted (or answered READY) between the two reads, or told WAITING after its admission.
        if (!(row.status !== 'WAITING' && row.exact === null)) statusMismatches++;
        continue;
      }
      const abs = Math.abs(row.reported - row.exact);
      // The rank at the moment of the answer lies between ZRANK before the call and after it:
      // the distance to that interval is the answer's own error, without the reads' delay.
      const before = row.before ?? row.exact;
      const off = row.reported > before ? row.reported - before : row.reported < row.exact ? row.exact - row.reported : 0;
      all.push({
        t: r.t,
        head: row.head,
        exact: row.exact,
        reported: row.reported,
        rel: row.exact === 0 ? (abs === 0 ? 0 : 1) : abs / row.exact,
        bracketRel: row.exact === 0 ? (off === 0 ? 0 : 1) : off / row.exact,
        signed: row.reported - row.exact,
      });
    }
  }
  const summarize = (rows) => {
    const rel = rows.map((x) => x.rel).sort((p, q) => p - q);
    const worst = rows.reduce((w, x) => (w === null || x.rel > w.rel ? x : w), null);
    return {
      compared: rows.length,
      meanRelError: round(mean(rel), 6),
      p99RelError: round(quantileSorted(rel, 0.99), 6),
      maxRelError: round(rel[rel.length - 1] ?? NaN, 6),
      maxAt: worst ? { exact: worst.exact, reported: worst.reported } : null,
      within1Percent: round(rel.filter((v) => v <= 0.01).length / Math.max(1, rel.length), 5),
      meanSignedError: round(mean(rows.map((x) => x.signed)), 2),
      bracketed: (() => {
        const b = rows.map((x) => x.bracketRel).sort((p, q) => p - q);
        const worstB = rows.reduce((w, x) => (w === null || x.bracketRel > w.bracketRel ? x : w), null);
        return {
          p99RelError: round(quantileSorted(b, 0.99), 6),
          maxRelError: round(b[b.length - 1] ?? NaN, 6),
          maxAt: worstB ? { exact: worstB.exact, reported: worstB.reported } : null,
          within1Percent: round(b.filter((v) => v <= 0.01).length / Math.max(1, b.length), 5),
        };
      })(),
    };
  };
  const atLeast1000 = all.filter((x) => x.exact >= 1000);
  return {
    note: 'each sampled member: ZRANK on another connection, queue.position() on its instance (the estimate, or an exact look-up below exactBelowRank), then ZRANK again right after its answer; the errors are against the ZRANK after, and (bracketed) against the interval between the two ZRANKs, where the rank was when the answer was made; half the members uniform over the crowd, half among those last told a rank in [1,000, 50,000)',
    statusMismatches,
    rankAtLeast1000: summarize(atLeast1000),
    uniformRankAtLeast1000: summarize(atLeast1000.filter((x) => !x.head)),
    byExactRank: Object.fromEntries(
      bands.map(([label, lo, hi]) => [label, summarize(all.filter((x) => x.exact >= lo && x.exact < hi))]).filter(([, v]) => v.compared > 0),
    ),
    rounds: rounds.map((r) => {
      const rows = all.filter((x) => x.t === r.t && x.exact >= 1000);
      const s = summarize(rows);
      return { t: r.t, compared: s.compared, p99RelError: s.p99RelError, maxRelError: s.maxRelError, bracketedMaxRelError: s.bracketed.maxRelError };
    }),
  };
}

function writeCharts(r) {
  const images = join(root, 'docs', 'images');
  mkdirSync(images, { recursive: true });
  const abandon = r.settings.queueOptions.abandonAfterSeconds;
  const sub = `${r.settings.members.toLocaleString('en-US')} members, ${r.settings.processes} app processes, 1 Redis, admitting ${r.settings.admitRatePerSecond}/s, abandonment ${abandon === null ? 'off' : `${abandon ?? 300} s`}; ${r.machine.cpus} cores; ${r.date.slice(0, 10)}`;
  const files = [];
  const put = (name, svg) => {
    const file = name.replace(/\.svg$/, `${variant}.svg`);
    writeFileSync(join(images, file), svg);
    files.push(`docs/images/${file}`);
  };
  const redisSeries = r.series.redis;
  const t0 = redisSeries[0]?.t ?? 0;
  const enterRows = redisSeries.filter((x) => x.phase === 'enter' || x.phase === 'start');
  put(
    'perf-crowd-million-enter.svg',
    lineChart({
      title: `Absorbing the crowd: ${r.settings.members.toLocaleString('en-US')} enters in ${r.enter.seconds} s (${r.enter.entriesPerSecond.toLocaleString('en-US')}/s)`,
      subtitle: sub,
      xLabel: 'seconds since the run started',
      yLabel: 'members waiting (thousands)',
      series: [{ name: 'members waiting (ZCARD), thousands', points: enterRows.map((x) => [round(x.t - t0, 1), x.waiting / 1000]) }],
    }),
  );
  put(
    'perf-crowd-million-redis-cpu.svg',
    lineChart({
      title: 'Redis CPU, share of one core (INFO cpu, per second)',
      subtitle: sub,
      xLabel: 'seconds since the run started (enter, then everyone polling through positionCache)',
      yLabel: '% of one core',
      series: [{ name: 'redis-server CPU (user + sys)', points: redisSeries.map((x) => [round(x.t - t0, 1), x.redisCpuShare * 100]) }],
      hLines: [{ y: 10, label: 'target while polling: < 10%', color: '#dc2626' }],
    }),
  );
  const pps = r.series.pollPerSecond;
  put(
    'perf-crowd-million-polls.svg',
    lineChart({
      title: `Polls per second through positionCache (target ${r.poll.targetPollsPerSecond.toLocaleString('en-US')}/s: everyone every 5 s)`,
      subtitle: sub,
      xLabel: 'seconds into the polling phase',
      yLabel: 'per second',
      series: [
        { name: 'polls answered', points: pps.map((b) => [b.s, b.polls]) },
        { name: 'store calls (exact + snapshots + touch) x 100', points: pps.map((b) => [b.s, (b.exact + b.snapshots + b.touch) * 100]) },
      ],
      hLines: [{ y: r.poll.targetPollsPerSecond, label: 'everyone every 5 s' }],
    }),
  );
  put(
    'perf-crowd-million-rank-error.svg',
    lineChart({
      title: 'Reported rank vs ZRANK, members at rank >= 1,000',
      subtitle: sub,
      xLabel: `seconds into the polling phase (every 5 s, ${r.settings.samplePerRound} members: half uniform, half at ranks 1,000-50,000)`,
      yLabel: 'relative error, %',
      series: [
        // Older results have no bracketed series: drawn without it.
        ...(r.series.rankRounds.every((x) => x.bracketedMaxRelError !== undefined)
          ? [{ name: 'max, vs both ZRANKs (bracketed)', color: '#2563eb', points: r.series.rankRounds.map((x) => [x.t, x.bracketedMaxRelError * 100]) }]
          : []),
        { name: 'max, vs the ZRANK after', color: '#f59e0b', points: r.series.rankRounds.map((x) => [x.t, x.maxRelError * 100]) },
        { name: 'p99, vs the ZRANK after', color: '#16a34a', points: r.series.rankRounds.map((x) => [x.t, x.p99RelError * 100]) },
      ],
      hLines: [{ y: 1, label: 'target 1%', color: '#dc2626' }],
    }),
  );
  return files;
}
