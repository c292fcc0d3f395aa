// The flash crowd: a separate Node process of simulated shoppers hitting the shop over
// real HTTP (keep-alive sockets on loopback). Each shopper has its own `shopper` cookie,
// enters, polls at the hinted interval (+-20% jitter, as waitgate/client), orders once
// READY, or gives up. Stops by itself (everyone done, or the time limit).
// Started by bench/simulate.mjs with fork(); reports over IPC.
//
// Abandoning shoppers (config.silentWaiting, config.goneAtAdmission): a silent shopper
// stops polling, without a word, at a random moment of the wait it was shown when it
// entered (uniform over [0, estimatedWaitSeconds]); a shopper admitted while still
// polling never comes back with probability goneAtAdmission (it stops the moment the
// shop admits it: the orchestrator forwards the shop's admissions, `admitted` messages,
// so it never reads its token unless a poll answered READY just before the message).
//
// Estimate honesty (SPEC §14): each shopper keeps the estimatedWaitSeconds of its enter reply
// and of each WAITING poll; with the moment of its admission (the shop's, forwarded) that gives
// estimate vs the wait it then actually had, at entry and at the poll nearest to half its wait
// (estimates()). The admission steps' moments give "never shrinks while nobody is admitted".

import { performance } from 'node:perf_hooks';
import { createHttpClient } from '../lib/http-client.mjs';
import { sendAndExit } from '../lib/ipc.mjs';
import { mulberry32 } from '../lib/seeded-random.mjs';

const config = JSON.parse(process.env.SIM_CONFIG);
// A seeded generator when config.seed is set: two runs side by side get the same crowd
// (arrivals, kinds, stop moments, jitter draws), whatever else differs.
const random = config.seed !== undefined ? mulberry32(config.seed) : Math.random;
/** Shopper i's own generator (its draws do not depend on how the others' interleave). */
const shopperRandom = (i) => (config.seed !== undefined ? mulberry32((config.seed ^ Math.imul(i + 1, 2654435761)) >>> 0) : Math.random);
const port = Number(process.env.SHOP_PORT);
const client = createHttpClient({ port, sockets: config.sockets });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const jitter = (seconds, rng = random) => seconds * 1000 * (1 - config.jitter + 2 * config.jitter * rng());
const rand = (a, b, rng = random) => a + rng() * (b - a);
const request = (method, path, cookie, { body, headers = {} } = {}) => client.request(method, path, { headers: { cookie, ...headers }, body });

// Per-second bins, on the shared epoch clock (t0 from the orchestrator: SIM_T0, or the `go` message).
let t0 = Number(process.env.SIM_T0) || 0;
const bins = [];
const bin = () => {
  const i = t0 > 0 ? Math.max(0, Math.floor((Date.now() - t0) / 1000)) : 0;
  return (bins[i] ??= { polls: 0, pollLatencies: [], enters: 0, orders: 0, orderLatencies: [], errors: 0, status503: 0, inFlightMax: 0 });
};
// The load generator's own health: if it is the bottleneck, poll latencies measure it, not the shop.
let expected = performance.now() + 50;
let lastCpu = process.cpuUsage();
let lastCpuAt = performance.now();
setInterval(() => {
  const now = performance.now();
  const b = bin();
  b.inFlightMax = Math.max(b.inFlightMax, client.inFlight());
  b.lagMaxMs = Math.max(b.lagMaxMs ?? 0, now - expected);
  const queued = client.queued();
  b.agentQueuedMax = Math.max(b.agentQueuedMax ?? 0, queued);
  expected = now + 50;
  if (now - lastCpuAt >= 1000) {
    const cpu = process.cpuUsage(lastCpu);
    b.cpuPercent = Math.round(((cpu.user + cpu.system) / 1000 / (now - lastCpuAt)) * 100);
    lastCpu = process.cpuUsage();
    lastCpuAt = now;
  }
}, 50).unref();

const outcome = {
  ordered: 0,
  abandonedWaiting: 0,
  leftWhenReady: 0,
  vanishedWhenReady: 0,
  stillWaitingAtEnd: 0,
  orderFailed: 0,
  unfinished: 0,
  stoppedPolling: 0,
  goneAtAdmission: 0,
  goneAfterReadingReady: 0,
};
const lost = { notEnteredWhileWaiting: 0, notEnteredIds: [] };
const errorsByStatus = {};
const shoppers = [];
const byId = new Map();
let stop = false;
const silentWaiting = config.silentWaiting ?? 0;
const admissionSteps = []; // epoch ms of each admission step that admitted someone (the shop's clock: same machine)
const goneAtAdmission = config.goneAtAdmission ?? 0;

// The shop's admissions, forwarded by the orchestrator: a shopper who is to go at admission goes now.
process.on('message', (message) => {
  if (message.type !== 'admitted') return;
  admissionSteps.push(message.at);
  for (const id of message.ids) {
    const me = byId.get(id);
    if (!me || me.admittedAt) continue;
    me.admittedAt = message.at;
    if (me.goesAtAdmission && me.stoppedAt === null) {
      me.gone = true;
      me.wake?.();
    }
  }
});

/** Sleeps `ms`, or less when `me` goes (woken by its admission). */
function sleepFor(me, ms) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      me.wake = null;
      resolve();
    }, ms);
    me.wake = () => {
      clearTimeout(timer);
      me.wake = null;
      resolve();
    };
  });
}

async function shopper(i) {
  const id = `s${String(i).padStart(6, '0')}`;
  const cookie = `shopper=${id}`;
  const me = {
    id,
    enterStart: 0,
    enterEnd: 0,
    state: 'arriving',
    readyAt: null,
    kind: 'buyer',
    stopAt: null,
    stoppedAt: null,
    lastAnsweredAt: null,
    admittedAt: null,
    gone: false,
    goesAtAdmission: false,
    orderedAt: null,
    shownWaitSeconds: null,
    wake: null,
    enterEstimate: undefined, // estimatedWaitSeconds of the enter reply (undefined: not WAITING)
    polls: [], // [asked at, answered at, estimatedWaitSeconds, rank] of each WAITING answer, epoch ms
  };
  shoppers.push(me);
  byId.set(id, me);
  const rng = shopperRandom(i);
  let r = rng();
  const silent = r < silentWaiting;
  r = silent ? rng() : (r - silentWaiting) / (1 - silentWaiting); // the other kinds among the rest, as before
  const kind = silent
    ? 'silent'
    : r < config.abandonWaiting
      ? 'impatient'
      : r < config.abandonWaiting + config.leaveWhenReady
        ? 'leaves-when-ready'
        : r < config.abandonWaiting + config.leaveWhenReady + config.vanishWhenReady
          ? 'vanishes'
          : 'buyer';
  me.kind = kind;
  me.goesAtAdmission = rng() < goneAtAdmission;
  const patienceMs = rand(config.patienceSeconds[0], config.patienceSeconds[1], rng) * 1000;

  // Enter (retry on 503 / network errors).
  let p = null;
  while (!stop) {
    me.enterStart ||= Date.now(); // the first attempt: one that timed out (503) may still have entered
    const res = await request('POST', '/queue/enter', cookie);
    me.enterEnd = Date.now();
    bin().enters++;
    if (res.status === 200) {
      p = res.body;
      me.lastAnsweredAt = Date.now();
      break;
    }
    bin().errors++;
    errorsByStatus[res.status] = (errorsByStatus[res.status] ?? 0) + 1;
    await sleep(2000);
  }
  if (!p) return;
  me.state = 'waiting';
  if (p.status === 'WAITING') me.enterEstimate = p.estimatedWaitSeconds;
  const waitingSince = performance.now();
  if (kind === 'silent' && p.status === 'WAITING') {
    // A random moment of the wait it was shown.
    me.shownWaitSeconds = p.estimatedWaitSeconds;
    me.stopAt = me.enterEnd + rng() * (p.estimatedWaitSeconds ?? 0) * 1000;
  }

  // Poll until READY.
  while (!stop && p.status !== 'READY') {
    if (kind === 'impatient' && performance.now() - waitingSince > patienceMs) {
      await request('DELETE', '/queue', cookie);
      me.state = 'abandoned';
      outcome.abandonedWaiting++;
      return;
    }
    const wait = jitter(p.pollingIntervalSeconds, rng);
    if (me.stopAt !== null && Date.now() + wait >= me.stopAt) {
      // Stops polling: closes the tab, says nothing.
      await sleepFor(me, Math.max(0, me.stopAt - Date.now()));
      if (!me.gone) {
        me.stoppedAt = me.stopAt;
        me.state = 'stopped';
        outcome.stoppedPolling++;
        return;
      }
    } else {
      await sleepFor(me, wait);
    }
    if (me.gone) {
      me.state = 'gone';
      outcome.goneAtAdmission++;
      return;
    }
    if (stop) break;
    const t = performance.now();
    const askedAt = Date.now();
    const res = await request('GET', '/queue/position', cookie);
    me.lastAnsweredAt = Date.now();
    if (res.status === 200 && res.body?.status === 'WAITING') me.polls.push([askedAt, me.lastAnsweredAt, res.body.estimatedWaitSeconds, res.body.rank]);
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
  if (me.goesAtAdmission) {
    // Was to go at its admission, but a poll answered READY before the shop's message came: it read its token, and never orders.
    me.state = 'gone-after-ready';
    outcome.goneAfterReadingReady++;
    return;
  }
  if (kind === 'vanishes') {
    outcome.vanishedWhenReady++; // the token expires unused after entryTokenTtlSeconds
    me.state = 'vanished';
    return;
  }
  await sleep(rand(config.thinkSeconds[0], config.thinkSeconds[1], rng) * 1000);
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
      me.orderedAt = Date.now();
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

/**
 * Per admitted shopper who entered WAITING: [id, entered at, estimate at entry, wait (s),
 * poll at half the wait: answered at, its estimate, the wait left then (s)] (the poll part
 * null when no WAITING poll fell within 25-75% of the wait). The wait is from the enter reply
 * to the shop's admission (or the READY answer if the admission message never came).
 * And pairs of consecutive WAITING polls with no admission step from 1 s before the first
 * was asked to the second's answer (nobody admitted at all), or whose rank did not fall
 * (nobody ahead admitted, nor gone): how many, and in how many the estimate shrank.
 */
function estimates() {
  const members = [];
  const steps = [...admissionSteps].sort((a, b) => a - b);
  const admittedBetween = (from, to) => {
    let lo = 0;
    let hi = steps.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (steps[mid] < from) lo = mid + 1;
      else hi = mid;
    }
    return lo < steps.length && steps[lo] <= to;
  };
  const pairs = () => ({ pairs: 0, shrank: 0, maxShrinkSeconds: 0, examples: [] });
  const still = { nobodyAdmitted: pairs(), rankDidNotFall: pairs() };
  const check = (c, id, a, b, seconds, rank) => {
    c.pairs++;
    if (b >= a) return;
    c.shrank++;
    c.maxShrinkSeconds = Math.max(c.maxShrinkSeconds, a - b);
    if (c.examples.length < 5) c.examples.push({ id, from: a, to: b, seconds, rank });
  };
  for (const s of shoppers) {
    for (let k = 1; k < s.polls.length; k++) {
      const [askedA, , a, rankA] = s.polls[k - 1];
      const [, answeredB, b, rankB] = s.polls[k];
      if (a === null || b === null) continue;
      const seconds = (answeredB - askedA) / 1000;
      if (!admittedBetween(askedA - 1000, answeredB)) check(still.nobodyAdmitted, s.id, a, b, seconds, [rankA, rankB]);
      if (rankA !== null && rankB !== null && rankB >= rankA) check(still.rankDidNotFall, s.id, a, b, seconds, [rankA, rankB]);
    }
    const admittedAt = s.admittedAt ?? s.readyAt;
    if (s.enterEstimate === undefined || admittedAt === null || !s.enterEnd) continue;
    const wait = (admittedAt - s.enterEnd) / 1000;
    let best = null;
    for (const [, answeredAt, estimate] of s.polls) {
      const into = (answeredAt - s.enterEnd) / 1000;
      if (estimate === null || into < wait * 0.25 || into > wait * 0.75) continue;
      if (!best || Math.abs(into - wait / 2) < Math.abs((best[0] - s.enterEnd) / 1000 - wait / 2)) best = [answeredAt, estimate];
    }
    const round = (x) => Number(x.toFixed(2));
    members.push([s.id, s.enterEnd, s.enterEstimate, round(wait), best?.[0] ?? null, best?.[1] ?? null, best ? round((admittedAt - best[0]) / 1000) : null]);
  }
  return { members, whileNobodyAdmitted: still, admissionSteps: steps.length };
}

const q = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] : null);

process.on('message', async (message) => {
  if (message.type !== 'go') return;
  if (message.t0) t0 = message.t0;
  const started = performance.now();
  const arrivals = Array.from({ length: config.shoppers }, () => random() * config.arrivalSeconds * 1000).sort((a, b) => a - b);
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
    return {
      t,
      polls: b.polls,
      enters: b.enters,
      orders: b.orders,
      errors: b.errors,
      status503: b.status503,
      pollP50Ms: q(lat, 0.5),
      pollP99Ms: q(lat, 0.99),
      orderP99Ms: q(ol, 0.99),
      httpInFlightMax: b.inFlightMax,
      loadgenCpuPercent: b.cpuPercent ?? null,
      loadgenLagMaxMs: Math.round(b.lagMaxMs ?? 0),
      agentQueuedMax: b.agentQueuedMax ?? 0,
    };
  });
  const allPolls = bins.flatMap((b) => b?.pollLatencies ?? []).sort((x, y) => x - y);
  client.destroy();
  await sendAndExit({
    type: 'result',
    seconds: (performance.now() - started) / 1000,
    outcome,
    lost,
    errorsByStatus,
    series,
    pollLatencyMs: { count: allPolls.length, p50: q(allPolls, 0.5), p99: q(allPolls, 0.99), max: allPolls[allPolls.length - 1] ?? null },
    enters: shoppers.map((s) => [s.id, s.enterStart, s.enterEnd, s.state]),
    // Per shopper, for the abandonment figures (epoch ms; null when it did not happen).
    shoppers: shoppers.map((s) => ({
      id: s.id,
      kind: s.kind,
      state: s.state,
      enterEnd: s.enterEnd || null,
      lastAnsweredAt: s.lastAnsweredAt,
      stopAt: s.stopAt,
      stoppedAt: s.stoppedAt,
      admittedAt: s.admittedAt,
      readyAt: s.readyAt,
      orderedAt: s.orderedAt,
      goesAtAdmission: s.goesAtAdmission,
      shownWaitSeconds: s.shownWaitSeconds,
    })),
    stoppedByDeadline: stop,
    estimates: estimates(),
  });
});
process.on('disconnect', () => process.exit(1));
