// The flash crowd: a separate Node process of simulated shoppers hitting the shop over
// real HTTP (keep-alive sockets on loopback). Each shopper has its own `shopper` cookie,
// enters, polls at the hinted interval (+-20% jitter, as waitgate/client), orders once
// READY, or gives up. Stops by itself (everyone done, or the time limit).
// Started by bench/simulate.mjs with fork(); reports over IPC.

import http from 'node:http';
import { performance } from 'node:perf_hooks';

const config = JSON.parse(process.env.SIM_CONFIG);
const port = Number(process.env.SHOP_PORT);
const agent = new http.Agent({ keepAlive: true, maxSockets: config.sockets });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const jitter = (seconds) => seconds * 1000 * (1 - config.jitter + 2 * config.jitter * Math.random());
const rand = (a, b) => a + Math.random() * (b - a);

let inFlight = 0;
function request(method, path, cookie, { body, headers = {} } = {}) {
  return new Promise((resolve) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    inFlight++;
    const req = http.request(
      { host: '127.0.0.1', port, method, path, agent, headers: { cookie, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}), ...headers } },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (data += c));
        res.on('end', () => {
          inFlight--;
          let json = null;
          try {
            json = data ? JSON.parse(data) : null;
          } catch {
            // not JSON: the body stays null
          }
          resolve({ status: res.statusCode, headers: res.headers, body: json });
        });
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
    req.on('error', (error) => {
      inFlight--;
      resolve({ status: 0, error: error.message });
    });
    if (payload) req.write(payload);
    req.end();
  });
}

// Per-second bins, on the shared epoch clock (t0 from the orchestrator).
const t0 = Number(process.env.SIM_T0);
const bins = [];
const bin = () => {
  const i = Math.max(0, Math.floor((Date.now() - t0) / 1000));
  return (bins[i] ??= { polls: 0, pollLatencies: [], enters: 0, orders: 0, orderLatencies: [], errors: 0, status503: 0, inFlightMax: 0 });
};
// The load generator's own health: if it is the bottleneck, poll latencies measure it, not the shop.
let expected = performance.now() + 50;
let lastCpu = process.cpuUsage();
let lastCpuAt = performance.now();
setInterval(() => {
  const now = performance.now();
  const b = bin();
  b.inFlightMax = Math.max(b.inFlightMax, inFlight);
  b.lagMaxMs = Math.max(b.lagMaxMs ?? 0, now - expected);
  const queued = Object.values(agent.requests).reduce((a, list) => a + list.length, 0);
  b.agentQueuedMax = Math.max(b.agentQueuedMax ?? 0, queued);
  expected = now + 50;
  if (now - lastCpuAt >= 1000) {
    const cpu = process.cpuUsage(lastCpu);
    b.cpuPercent = Math.round(((cpu.user + cpu.system) / 1000 / (now - lastCpuAt)) * 100);
    lastCpu = process.cpuUsage();
    lastCpuAt = now;
  }
}, 50).unref();

const outcome = { ordered: 0, abandonedWaiting: 0, leftWhenReady: 0, vanishedWhenReady: 0, stillWaitingAtEnd: 0, orderFailed: 0, unfinished: 0 };
const lost = { notEnteredWhileWaiting: 0, notEnteredIds: [] };
const errorsByStatus = {};
const shoppers = [];
let stop = false;

async function shopper(i) {
  const id = `s${String(i).padStart(6, '0')}`;
  const cookie = `shopper=${id}`;
  const me = { id, enterStart: 0, enterEnd: 0, state: 'arriving', readyAt: null };
  shoppers.push(me);
  const r = Math.random();
  const kind = r < config.abandonWaiting ? 'impatient' : r < config.abandonWaiting + config.leaveWhenReady ? 'leaves-when-ready' : r < config.abandonWaiting + config.leaveWhenReady + config.vanishWhenReady ? 'vanishes' : 'buyer';
  const patienceMs = rand(config.patienceSeconds[0], config.patienceSeconds[1]) * 1000;

  // Enter (retry on 503 / network errors).
  let p = null;
  while (!stop) {
    me.enterStart = Date.now();
    const res = await request('POST', '/queue/enter', cookie);
    me.enterEnd = Date.now();
    bin().enters++;
    if (res.status === 200) {
      p = res.body;
      break;
    }
    bin().errors++;
    errorsByStatus[res.status] = (errorsByStatus[res.status] ?? 0) + 1;
    await sleep(2000);
  }
  if (!p) return;
  me.state = 'waiting';
  const waitingSince = performance.now();

  // Poll until READY.
  while (!stop && p.status !== 'READY') {
    if (kind === 'impatient' && performance.now() - waitingSince > patienceMs) {
      await request('DELETE', '/queue', cookie);
      me.state = 'abandoned';
      outcome.abandonedWaiting++;
      return;
    }
    await sleep(jitter(p.pollingIntervalSeconds));
    if (stop) break;
    const t = performance.now();
    const res = await request('GET', '/queue/position', cookie);
    const b = bin();
    b.polls++;
    b.pollLatencies.push(performance.now() - t);
    if (res.status !== 200) {
      b.errors++;
      if (res.status === 503) b.status503++;
      errorsByStatus[res.status] = (errorsByStatus[res.status] ?? 0) + 1;
      await sleep(2000);
      continue;
    }
    if (res.body.status === 'NOT_ENTERED') {
      // Never happens to a shopper who did not leave: it would be a lost member.
      lost.notEnteredWhileWaiting++;
      if (lost.notEnteredIds.length < 20) lost.notEnteredIds.push(id);
      me.state = 'lost';
      return;
    }
    p = res.body;
  }
  if (p.status !== 'READY') {
    me.state = 'waiting-at-end';
    outcome.stillWaitingAtEnd++;
    return;
  }
  me.state = 'ready';
  me.readyAt = Date.now();
  if (kind === 'vanishes') {
    outcome.vanishedWhenReady++; // the token expires unused after entryTokenTtlSeconds
    me.state = 'vanished';
    return;
  }
  await sleep(rand(config.thinkSeconds[0], config.thinkSeconds[1]) * 1000);
  if (kind === 'leaves-when-ready') {
    await request('DELETE', '/queue', cookie);
    outcome.leftWhenReady++;
    me.state = 'left';
    return;
  }
  // Order; retry on 503 (the store was away) and IN_USE.
  for (let attempt = 0; attempt < 5 && !stop; attempt++) {
    const t = performance.now();
    const res = await request('POST', '/api/orders', cookie, { body: { productId: 1 + (i % 3) }, headers: { 'x-entry-token': p.entryToken } });
    const b = bin();
    b.orderLatencies.push(performance.now() - t);
    if (res.status === 201) {
      b.orders++;
      outcome.ordered++;
      me.state = 'ordered';
      return;
    }
    b.errors++;
    errorsByStatus[res.status] = (errorsByStatus[res.status] ?? 0) + 1;
    if (res.status !== 503 && res.status !== 409 && res.status !== 0) break;
    await sleep(1000);
  }
  outcome.orderFailed++;
  me.state = 'order-failed';
}

const q = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] : null);

process.on('message', async (message) => {
  if (message.type !== 'go') return;
  const started = performance.now();
  const arrivals = Array.from({ length: config.shoppers }, () => Math.random() * config.arrivalSeconds * 1000).sort((a, b) => a - b);
  const running = [];
  for (let i = 0; i < arrivals.length; i++) {
    const wait = arrivals[i] - (performance.now() - started);
    if (wait > 1) await sleep(wait);
    running.push(shopper(i));
  }
  const deadline = setTimeout(() => (stop = true), Math.max(0, config.maxSeconds * 1000 - (performance.now() - started)));
  await Promise.all(running);
  clearTimeout(deadline);
  for (const s of shoppers) if (s.state === 'waiting' || s.state === 'ready' || s.state === 'arriving') outcome.unfinished++;
  const series = bins.map((b, t) => {
    b ??= { polls: 0, pollLatencies: [], enters: 0, orders: 0, orderLatencies: [], errors: 0, status503: 0, inFlightMax: 0 };
    const lat = b.pollLatencies.sort((x, y) => x - y);
    const ol = b.orderLatencies.sort((x, y) => x - y);
    return { t, polls: b.polls, enters: b.enters, orders: b.orders, errors: b.errors, status503: b.status503, pollP50Ms: q(lat, 0.5), pollP99Ms: q(lat, 0.99), orderP99Ms: q(ol, 0.99), httpInFlightMax: b.inFlightMax, loadgenCpuPercent: b.cpuPercent ?? null, loadgenLagMaxMs: Math.round(b.lagMaxMs ?? 0), agentQueuedMax: b.agentQueuedMax ?? 0 };
  });
  const allPolls = bins.flatMap((b) => b?.pollLatencies ?? []).sort((x, y) => x - y);
  process.send({
    type: 'result',
    seconds: (performance.now() - started) / 1000,
    outcome,
    lost,
    errorsByStatus,
    series,
    pollLatencyMs: { count: allPolls.length, p50: q(allPolls, 0.5), p99: q(allPolls, 0.99), max: allPolls[allPolls.length - 1] ?? null },
    enters: shoppers.map((s) => [s.id, s.enterStart, s.enterEnd, s.state]),
    stoppedByDeadline: stop,
  });
  agent.destroy();
  setTimeout(() => process.exit(0), 100);
});
process.on('disconnect', () => process.exit(1));
