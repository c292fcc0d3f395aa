// npm run simulate -- --always-on [--short]: the safety net and stock (SPEC §18) on a real
// redis-server (spawned here), in process (no HTTP: the store's own path is what is measured).
//
// 1. Quiet load: arrivals below the rate (SIM_QUIET_RATE/s against a rate of 100/s) with the
//    safety net on; each member's enter -> READY (instantly, or by polling while an admitter
//    runs every 100 ms). Reports p50/p99 enter -> READY (target: p99 <= 50 ms).
// 2. Flash crowd with stock: 1,000 members at once (--short: 400), stock 100, four queue
//    instances admitting and buying (one in five admitted walks away). Reports units sold
//    (0 oversold: consumed never above the stock), and the admission steps after the last
//    unit (the queue closes in the consume that sells it: the controls log's waitgate:stock
//    entry, and no member admitted after it).
// 3. A surge (2,000 members at once; --short: 300) with the safety net on and off, alternating:
//    the same FIFO order, waits and rate achieved (SPEC §18: a line forms only when over).
// SIM_OUT=<file> also writes the figures as JSON.

import { performance } from 'node:perf_hooks';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { Redis } from 'ioredis';
import { RedisStore, WaitingQueue } from 'waitgate';
import { startBenchRedisServer } from '../../scripts/redis-server.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

async function quiet(client, { seconds, perSecond }) {
  const name = `quiet-${Date.now()}`;
  const queue = new WaitingQueue({ store: new RedisStore({ client }), name, safetyNet: true, admitRatePerSecond: 100, entryTokenTtlSeconds: 60 });
  const admitter = queue.startAdmitter({ intervalMs: 100 });
  const latencies = [];
  let instant = 0;
  const members = [];
  const gap = 1000 / perSecond;
  const started = performance.now();
  for (let i = 0; performance.now() - started < seconds * 1000; i++) {
    const id = `q${i}`;
    members.push(
      (async () => {
        const t = performance.now();
        let p = await queue.enter(id);
        if (p.status === 'READY') instant++;
        while (p.status !== 'READY') {
          await sleep(10);
          p = await queue.position(id);
        }
        latencies.push(performance.now() - t);
        await queue.leave(id); // done: its token goes back
      })(),
    );
    await sleep(gap);
  }
  await Promise.all(members);
  await admitter.stop();
  latencies.sort((a, b) => a - b);
  return { members: latencies.length, instant, p50Ms: +quantile(latencies, 0.5).toFixed(1), p99Ms: +quantile(latencies, 0.99).toFixed(1) };
}

async function stock(client, { members, units }) {
  const name = `stock-${Date.now()}`;
  const make = () => new WaitingQueue({ store: new RedisStore({ client }), name, safetyNet: true, admitRatePerSecond: 200, admitBurst: 50 });
  const instances = [make(), make(), make(), make()];
  await instances[0].setControls({ stock: units }, { actor: 'simulate' });
  const admittedAt = [];
  const buy = (q, memberId, token) =>
    Number(memberId.slice(1)) % 5 === 0 ? q.leave(memberId).then(() => false) : q.claim(memberId, token).then((c) => q.consume(c));
  // The crowd at once: the safety net lets the first burst in from enter itself; they buy too.
  const entered = await Promise.all(
    Array.from({ length: members }, (_, i) => instances[i % 4].enter(`m${i}`).then((p) => ({ id: `m${i}`, q: instances[i % 4], p }))),
  );
  const instant = entered.filter((e) => e.p.status === 'READY');
  admittedAt.push(...instant.map(() => Date.now()));
  let sold = (await Promise.all(instant.map((e) => buy(e.q, e.id, e.p.entryToken)))).filter(Boolean).length;
  await Promise.all(
    instances.map(async (q) => {
      for (let idle = 0; idle < 200;) {
        const admitted = await q.admit();
        if (admitted.length === 0 && (await q.controls()).mode === 'closed') break;
        idle = admitted.length === 0 ? idle + 1 : 0;
        const now = Date.now();
        admittedAt.push(...admitted.map(() => now));
        const results = await Promise.all(admitted.map((a) => buy(q, a.memberId, a.entryToken)));
        sold += results.filter(Boolean).length;
        await sleep(admitted.length === 0 ? 20 : 5);
      }
    }),
  );
  const stats = await instances[0].stats();
  const log = await instances[0].controlsLog({ limit: 5 });
  const closing = log.find((e) => e.actor === 'waitgate:stock');
  const afterClose = closing ? admittedAt.filter((t) => t > closing.at + 5).length : null; // 5 ms: clocks of this process and Redis
  return {
    members,
    units,
    instant: instant.length,
    sold,
    consumed: stats.totals.consumed,
    oversold: Math.max(0, stats.totals.consumed - units),
    closedBy: closing?.actor ?? null,
    admittedAfterClose: afterClose,
    mode: (await instances[0].controls()).mode,
  };
}

/**
 * A flash crowd at once, with or without the safety net, on one queue (rate 200/s, burst 20):
 * the first members may be let in from enter itself (the line is empty), then everyone queues.
 * Each member polls every 100 ms; one admission step every 100 ms. Reports the members let in
 * at once, FIFO violations (a member admitted before one who entered ahead of it), the wait
 * p50/p90 (enter -> READY) and the rate achieved (admissions per second over the run).
 */
async function surge(client, { members, safetyNet }) {
  const queue = new WaitingQueue({
    store: new RedisStore({ client }),
    name: `surge-${safetyNet ? 'net' : 'plain'}-${Date.now()}`,
    safetyNet,
    admitRatePerSecond: 200,
    admitBurst: 20,
    entryTokenTtlSeconds: 120,
  });
  const started = performance.now();
  const entered = await Promise.all(Array.from({ length: members }, (_, i) => queue.enter(`s${i}`).then((p) => ({ id: `s${i}`, p, at: performance.now() }))));
  const instant = entered.filter((e) => e.p.status === 'READY');
  // Entry order: the rank each waiting member was given (those let in at once came first).
  const entryRank = new Map(entered.filter((e) => e.p.status === 'WAITING').map((e) => [e.id, e.p.rank]));
  const waits = instant.map((e) => e.at - started);
  const admittedOrder = [];
  let lastAdmission = performance.now();
  while (admittedOrder.length < entryRank.size) {
    const admitted = await queue.admit();
    if (admitted.length > 0) lastAdmission = performance.now();
    for (const a of admitted) {
      admittedOrder.push(a.memberId);
      waits.push(performance.now() - started); // READY at the member's next poll: up to 100 ms later
    }
    await sleep(100);
  }
  let fifoViolations = 0;
  let highest = -1;
  for (const id of admittedOrder) {
    const rank = entryRank.get(id) ?? -1;
    if (rank < highest) fifoViolations++;
    highest = Math.max(highest, rank);
  }
  waits.sort((a, b) => a - b);
  const seconds = (lastAdmission - started) / 1000;
  return {
    safetyNet,
    members,
    instant: instant.length,
    fifoViolations,
    waitP50Seconds: +(quantile(waits, 0.5) / 1000).toFixed(2),
    waitP90Seconds: +(quantile(waits, 0.9) / 1000).toFixed(2),
    admittedPerSecond: +((instant.length + admittedOrder.length) / seconds).toFixed(1),
  };
}

/** Runs the parts; prints the figures and the machine's load; the result also to SIM_OUT when set. */
export async function runAlwaysOn({ short }) {
  const server = await startBenchRedisServer();
  const client = new Redis(server.url, { maxRetriesPerRequest: 1 });
  try {
    const load = () =>
      os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ');
    console.log(`simulate --always-on${short ? ' --short' : ''}: load average ${load()}`);
    const q = await quiet(client, { seconds: short ? 3 : 10, perSecond: Number(process.env.SIM_QUIET_RATE ?? 40) });
    console.log(
      `quiet load (${q.members} members at ${process.env.SIM_QUIET_RATE ?? 40}/s, rate 100/s, safety net on): ${q.instant} instant; enter -> READY p50 ${q.p50Ms} ms, p99 ${q.p99Ms} ms ${q.p99Ms <= 50 ? 'ok' : 'ABOVE 50 ms'}`,
    );
    const s = await stock(client, { members: short ? 400 : 1000, units: 100 });
    console.log(
      `flash crowd with stock: ${s.members} members, stock ${s.units}, 4 instances: ${s.instant} let in by the safety net, sold ${s.sold}, consumed ${s.consumed}, oversold ${s.oversold}; closed by ${s.closedBy} (mode ${s.mode}), members admitted after the closing: ${s.admittedAfterClose}`,
    );
    // The surge with and without the net, twice each in alternating order (medians of nothing:
    // two runs each are shown as they came, so a reader sees the spread).
    const surges = [];
    for (const safetyNet of [true, false, false, true]) surges.push(await surge(client, { members: short ? 300 : 2000, safetyNet }));
    for (const r of surges) {
      console.log(
        `surge of ${r.members} at once (rate 200/s, burst 20), safety net ${r.safetyNet ? 'on ' : 'off'}: ${r.instant} let in at once, FIFO violations ${r.fifoViolations}, wait p50 ${r.waitP50Seconds} s, p90 ${r.waitP90Seconds} s, ${r.admittedPerSecond} admitted/s`,
      );
    }
    console.log(`load average after: ${load()}`);
    const result = { date: new Date().toISOString(), short, loadAverage: os.loadavg(), quiet: q, stock: s, surges };
    if (process.env.SIM_OUT) writeFileSync(process.env.SIM_OUT, `${JSON.stringify(result, null, 2)}\n`);
    return result;
  } finally {
    client.disconnect();
    await server.stop();
  }
}
