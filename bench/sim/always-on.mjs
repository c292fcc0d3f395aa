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

import { performance } from 'node:perf_hooks';
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
  const buy = (q, memberId, token) => (Number(memberId.slice(1)) % 5 === 0 ? q.leave(memberId).then(() => false) : q.claim(memberId, token).then((c) => q.consume(c)));
  // The crowd at once: the safety net lets the first burst in from enter itself; they buy too.
  const entered = await Promise.all(Array.from({ length: members }, (_, i) => instances[i % 4].enter(`m${i}`).then((p) => ({ id: `m${i}`, q: instances[i % 4], p }))));
  const instant = entered.filter((e) => e.p.status === 'READY');
  admittedAt.push(...instant.map(() => Date.now()));
  let sold = (await Promise.all(instant.map((e) => buy(e.q, e.id, e.p.entryToken)))).filter(Boolean).length;
  await Promise.all(
    instances.map(async (q) => {
      for (let idle = 0; idle < 200; ) {
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
  return { members, units, instant: instant.length, sold, consumed: stats.totals.consumed, oversold: Math.max(0, stats.totals.consumed - units), closedBy: closing?.actor ?? null, admittedAfterClose: afterClose, mode: (await instances[0].controls()).mode };
}

/** Runs both parts; prints the figures and the machine's load. */
export async function runAlwaysOn({ short }) {
  const server = await startBenchRedisServer();
  const client = new Redis(server.url, { maxRetriesPerRequest: 1 });
  try {
    const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
    console.log(`simulate --always-on${short ? ' --short' : ''}: load average ${load()}`);
    const q = await quiet(client, { seconds: short ? 3 : 10, perSecond: Number(process.env.SIM_QUIET_RATE ?? 40) });
    console.log(`quiet load (${q.members} members at ${process.env.SIM_QUIET_RATE ?? 40}/s, rate 100/s, safety net on): ${q.instant} instant; enter -> READY p50 ${q.p50Ms} ms, p99 ${q.p99Ms} ms ${q.p99Ms <= 50 ? 'ok' : 'ABOVE 50 ms'}`);
    const s = await stock(client, { members: short ? 400 : 1000, units: 100 });
    console.log(
      `flash crowd with stock: ${s.members} members, stock ${s.units}, 4 instances: ${s.instant} let in by the safety net, sold ${s.sold}, consumed ${s.consumed}, oversold ${s.oversold}; closed by ${s.closedBy} (mode ${s.mode}), members admitted after the closing: ${s.admittedAfterClose}`,
    );
    console.log(`load average after: ${load()}`);
    return { quiet: q, stock: s };
  } finally {
    client.disconnect();
    await server.stop();
  }
}
