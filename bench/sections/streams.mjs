// Event streams at scale (SPEC §16): N members hold `GET /queue/events` open on ONE instance
// (bench/sections/streams-server.mjs, a process of its own, Express, positionCache on, steps
// pushed through a subscriber), on loopback, while another instance (this process) admits one
// step a second at 10/s: every waiting member's place changes at each step.
//
// Per phase (N = 1,000 and 10,000 streams), over `phaseSeconds`:
//   - delivery: each event a stream receives shows the outcome of some step (its rank, or
//     READY: the members admitted so far, counted from its first event); the first event that
//     shows a step is timed from just before that step's admit() call to its arrival. A member
//     near the head is told every step; a member further back at its polling pace, so its
//     events show only some steps (each is timed from the step it shows);
//   - the gap between a stream's consecutive events (p99: how long a member further back goes
//     untold, about its polling interval) and the events per member-minute;
//   - Redis commands per second (INFO commandstats: script calls, and every command run);
//   - the instance's CPU (process.cpuUsage) per member-minute;
//   - memory per stream: the instance's RSS and heap after a GC, before and after opening them.
// Then the same 10,000 members poll `GET /queue/position` every 5 s (±20%) through positionCache
// on a fresh instance: its CPU per poll, times 12 polls a minute, is the polling cost per
// member-minute (so a bench process too busy to poll at full pace does not flatter the streams).
// Bounded: every phase ends after its seconds, and the whole section gives up after 10 minutes.

import { fork } from 'node:child_process';
import { Agent, request } from 'node:http';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { RedisStore, WaitingQueue } from 'waitgate';
import { commandStats, countCommands, diffStats } from '../lib/redis-info.mjs';
import { quantileSorted, round } from '../lib/stats.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const STEP_MS = 1000;
const POLL_SECONDS = 5;

/** Starts the instance; resolves { port, ask(message) -> reply, stop() }. */
async function startInstance(url, name) {
  const profile = process.env.BENCH_STREAMS_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_STREAMS_CPU_PROF}`] : [];
  const child = fork(join(here, 'streams-server.mjs'), [url, name], { execArgv: ['--expose-gc', ...profile], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m.port));
    child.once('exit', (code) => reject(new Error(`streams instance exited (${code})`)));
  });
  const ask = (message) =>
    new Promise((resolve) => {
      child.once('message', resolve);
      child.send(message);
    });
  // Disconnecting lets it exit by itself (and write a CPU profile); killed if it does not within 5 s (60 s while profiling: a large profile takes long to write).
  const stop = () => {
    child.disconnect();
    setTimeout(() => child.kill(), profile.length > 0 ? 60_000 : 5000).unref();
  };
  return { port, ask, stop };
}

/** A fresh instance for queue `name`, and `size` members entered through the admitting instance (this process). */
async function startPhase(url, redisClient, name, size) {
  const instance = await startInstance(url, name);
  const admitter = new WaitingQueue({ store: new RedisStore({ client: redisClient }), name, admitRatePerSecond: 10, abandonAfterSeconds: null });
  const members = Array.from({ length: size }, (_, i) => `m${i}`);
  for (let i = 0; i < members.length; i += 500) await Promise.all(members.slice(i, i + 500).map((m) => admitter.enter(m)));
  return { instance, admitter, members };
}

/** Opens one stream; each event (its name, the position's rank, when it arrived) goes to onEvent. */
function openStream(port, member, onEvent) {
  const stream = { open: true, req: null, events: [] };
  let buffered = '';
  stream.req = request({ host: '127.0.0.1', port, path: '/queue/events', headers: { 'x-member': member, accept: 'text/event-stream' }, agent: false }, (res) => {
    res.setEncoding('utf8');
    res.on('data', (chunk) => {
      const at = performance.now();
      buffered += chunk;
      const blocks = buffered.split('\n\n');
      buffered = blocks.pop();
      for (const block of blocks) {
        const event = /^event: (\w+)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event && data) onEvent(stream, { event, rank: JSON.parse(data).rank, at });
      }
    });
    res.on('close', () => (stream.open = false));
  });
  stream.req.on('error', () => (stream.open = false));
  stream.req.end();
  return stream;
}

/**
 * The deliveries of a phase: for each stream, from its first event (rank r0, before any step),
 * each later event shows the members admitted so far (r0 - rank, or r0 + 1 for READY), hence
 * the first step whose running count reached that; the first event to show a step is timed
 * from that step's start. Also the gaps between a stream's events during the steps.
 */
function deliveriesOf(streams, stepStarts, admittedAfter, t0, tEnd) {
  const latencies = [];
  const gaps = [];
  let events = 0;
  for (const s of streams) {
    const [first, ...later] = s.events;
    if (!first || first.rank === null || first.rank === undefined) continue;
    let shown = -1;
    let previousAt = null;
    for (const e of later) {
      if (e.at < t0 || e.at > tEnd) continue;
      events++;
      if (previousAt !== null) gaps.push(e.at - previousAt);
      previousAt = e.at;
      const admitted = e.event === 'ready' ? first.rank + 1 : first.rank - e.rank;
      const step = admittedAfter.findIndex((count) => count >= admitted);
      if (step <= shown || step < 0) continue;
      shown = step;
      latencies.push(e.at - stepStarts[step]);
    }
  }
  return { latencies: latencies.sort((a, b) => a - b), gaps: gaps.sort((a, b) => a - b), events };
}

async function streamsPhase({ url, redisClient, size, phaseSeconds, log }) {
  const { instance, admitter, members } = await startPhase(url, redisClient, `streams-${size}`, size);
  const before = (await instance.ask({ memory: true })).memory;
  let firstEvents = 0;
  const onEvent = (stream, event) => {
    if (stream.events.length === 0) firstEvents++;
    stream.events.push(event);
  };
  const streams = [];
  for (let i = 0; i < size; i += 200) {
    streams.push(...members.slice(i, i + 200).map((m) => openStream(instance.port, m, onEvent)));
    while (firstEvents < streams.length) await sleep(20);
  }
  await sleep(1000);
  const after = (await instance.ask({ memory: true })).memory;
  const cpu0 = (await instance.ask({ cpu: true })).cpu;
  const stats0 = await commandStats(redisClient);
  const t0 = performance.now();
  const stepStarts = [];
  const admittedAfter = [];
  let admitted = 0;
  while (performance.now() - t0 < phaseSeconds * 1000) {
    const at = performance.now();
    stepStarts.push(at);
    admitted += (await admitter.admit()).length;
    admittedAfter.push(admitted);
    await sleep(Math.max(0, at + STEP_MS - performance.now()));
  }
  const tEnd = performance.now();
  const seconds = (tEnd - t0) / 1000;
  const cpuMs = ((await instance.ask({ cpu: true })).cpu - cpu0) / 1000;
  const commands = countCommands(diffStats(stats0, await commandStats(redisClient)));
  for (const s of streams) s.req.destroy();
  instance.stop();
  const { latencies, gaps, events } = deliveriesOf(streams, stepStarts, admittedAfter, t0, tEnd);
  const open = streams.filter((s) => s.open).length;
  const result = {
    streams: size,
    steps: stepStarts.length,
    seconds: round(seconds, 1),
    deliveries: latencies.length,
    deliveryMs: { p50: round(quantileSorted(latencies, 0.5), 1), p99: round(quantileSorted(latencies, 0.99), 1), max: round(latencies.at(-1) ?? 0, 1) },
    gapBetweenEventsMs: { p50: round(quantileSorted(gaps, 0.5), 1), p99: round(quantileSorted(gaps, 0.99), 1), max: round(gaps.at(-1) ?? 0, 1) },
    eventsPerMemberMinute: round((events / size / seconds) * 60, 2),
    redisScriptsPerSecond: round(commands.scripts / seconds, 1),
    redisCommandsPerSecond: round(commands.all / seconds, 1),
    cpuMsPerSecond: round(cpuMs / seconds, 1),
    cpuMsPerMemberMinute: round((cpuMs / size / seconds) * 60, 4),
    memoryPerStream: { rssBytes: Math.round((after.rss - before.rss) / size), heapBytes: Math.round((after.heapUsed - before.heapUsed) / size) },
    stillOpen: open,
  };
  log(
    `  ${size} streams: ${result.steps} steps, delivery p50 ${result.deliveryMs.p50} ms p99 ${result.deliveryMs.p99} ms (${latencies.length} timed), ` +
      `gap between events p99 ${result.gapBetweenEventsMs.p99} ms, ${result.eventsPerMemberMinute} events per member-minute, ` +
      `Redis ${result.redisScriptsPerSecond} scripts/s ${result.redisCommandsPerSecond} commands/s, instance CPU ${result.cpuMsPerSecond} ms/s ` +
      `(${result.cpuMsPerMemberMinute} ms per member-minute), ${result.memoryPerStream.rssBytes} B RSS / ${result.memoryPerStream.heapBytes} B heap per stream`,
  );
  return result;
}

async function pollingPhase({ url, redisClient, size, phaseSeconds, log }) {
  const { instance, admitter, members } = await startPhase(url, redisClient, `polling-${size}`, size);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  let polls = 0;
  const poll = (member) =>
    new Promise((resolve) => {
      const req = request({ host: '127.0.0.1', port: instance.port, path: '/queue/position', headers: { 'x-member': member }, agent }, (res) => {
        res.resume();
        res.on('end', () => {
          polls++;
          resolve();
        });
      });
      req.on('error', resolve);
      req.end();
    });
  for (let i = 0; i < size; i += 500) await Promise.all(members.slice(i, i + 500).map(poll)); // the cache learns each member
  let running = true;
  const loops = members.map(async (member) => {
    await sleep(Math.random() * POLL_SECONDS * 1000);
    while (running) {
      await poll(member);
      await sleep(POLL_SECONDS * 1000 * (0.8 + 0.4 * Math.random()));
    }
  });
  await sleep(POLL_SECONDS * 1000);
  const cpu0 = (await instance.ask({ cpu: true })).cpu;
  const polls0 = polls;
  const t0 = performance.now();
  while (performance.now() - t0 < phaseSeconds * 1000) {
    const at = performance.now();
    await admitter.admit();
    await sleep(Math.max(0, at + STEP_MS - performance.now()));
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpuMs = ((await instance.ask({ cpu: true })).cpu - cpu0) / 1000;
  const measuredPolls = polls - polls0;
  running = false;
  instance.stop();
  agent.destroy();
  await Promise.race([Promise.all(loops), sleep(POLL_SECONDS * 2000)]);
  const cpuMsPerPoll = cpuMs / measuredPolls;
  const result = {
    members: size,
    seconds: round(seconds, 1),
    pollsPerSecond: round(measuredPolls / seconds, 1),
    cpuMsPerPoll: round(cpuMsPerPoll, 4),
    cpuMsPerMemberMinute: round(cpuMsPerPoll * (60 / POLL_SECONDS), 4),
  };
  log(`  ${size} polling every ${POLL_SECONDS} s: ${result.pollsPerSecond} polls/s, ${result.cpuMsPerPoll} ms CPU per poll = ${result.cpuMsPerMemberMinute} ms per member-minute`);
  return result;
}

export async function runStreams({ url, sizes = [1000, 10_000], phaseSeconds = 20, log }) {
  const redisClient = new Redis(url);
  const giveUp = setTimeout(() => {
    log('  streams: gave up after 10 minutes');
    process.exit(1);
  }, 600_000);
  giveUp.unref();
  try {
    const phases = {};
    for (const size of sizes) phases[size] = await streamsPhase({ url, redisClient, size, phaseSeconds, log });
    const largest = Math.max(...sizes);
    const polling = await pollingPhase({ url, redisClient, size: largest, phaseSeconds, log });
    const [small, large] = [phases[Math.min(...sizes)], phases[largest]];
    const ratios = {
      'redis commands/s, most/fewest streams': round(large.redisCommandsPerSecond / small.redisCommandsPerSecond, 2),
      'cpu per member-minute, streams/polling 5 s': round(large.cpuMsPerMemberMinute / polling.cpuMsPerMemberMinute, 3),
    };
    log(`  ratios: ${Object.entries(ratios).map(([k, v]) => `${k} ${v}`).join('; ')}`);
    return { settings: { sizes, phaseSeconds, stepMs: STEP_MS, admitRatePerSecond: 10, pollSeconds: POLL_SECONDS }, phases, polling, ratios };
  } finally {
    clearTimeout(giveUp);
    redisClient.disconnect();
  }
}
