// Polling at scale: 100,000 waiting members polling through the API (WaitingQueue with
// positionCache on), several app instances (one WaitingQueue + ioredis client each).
// Measures Redis calls per poll, reported rank vs exact ZRANK, and how soon an admitted
// member sees READY.
//
// With `preQueue: { shuffle: true }` (the polling-shuffle section) the crowd enters a
// shuffled pre-queue instead (setControls({ opensAt: 10 min ahead, shuffle: true })
// first, so every member's score is pb + its draw: not consecutive, in random order of
// arrival), the opening is then moved to `leadMs` ahead and passes, and everything
// after is as for the FIFO crowd. Ranks are compared three times: right after the
// opening with the caches the members' enters left (how an app runs), with fresh
// instances that learned each member from one exact poll after the opening (the
// interpolation over drawn scores alone), and after the polling phase (leaves).

import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { RedisStore, WaitingQueue } from 'waitgate';
import { forEachConcurrent, ids } from '../lib/bulk-enter.mjs';
import { countingStore, diffCounts } from '../lib/counting-store.mjs';
import { commandStats, countCommands, diffStats } from '../lib/redis-info.mjs';
import { mean, quantileSorted, round } from '../lib/stats.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const NAME = 'crowd';
const JITTER = 0.2; // as waitgate/client: each wait is the hinted interval +-20%
const TICK_MS = 20;

const WAITING = 0;
const READY = 1;
const LEFT = 2;

export async function runPolling({ url, members: N = 100_000, instances: K = 4, phaseSeconds = 20, randomPhaseSeconds = 8, leaveFraction = 0.05, admitRatePerSecond = 50, cacheOptions = true, preQueue = null, log = console.log }) {
  const clients = Array.from({ length: K }, () => new Redis(url, { maxRetriesPerRequest: 1 }));
  const control = new Redis(url, { maxRetriesPerRequest: 1 });
  const instancesOf = () => {
    const stores = clients.map((client) => countingStore(new RedisStore({ client })));
    return { stores, queues: stores.map((store) => new WaitingQueue({ store, name: NAME, admitRatePerSecond, positionCache: cacheOptions, operationTimeoutMs: 10_000, abandonAfterSeconds: null })) };
  };
  // let: with a pre-queue, the polling phase may run on fresh instances (preQueue.pollThrough).
  let { stores, queues } = instancesOf();
  const refreshMs = queues[0].config.positionCache.refreshMs;
  const memberIds = ids('m', 0, N);
  const index = new Map(memberIds.map((id, i) => [id, i]));
  const home = (i) => queues[i % K];
  const out = { settings: { members: N, instances: K, phaseSeconds, leaveFraction, admitRatePerSecond, admitters: K, refreshMs, positionCache: queues[0].config.positionCache, jitter: JITTER, pollingIntervals: queues[0].config.pollingIntervals, preQueue } };
  // Rank bands of the accuracy tables: below exactBelowRank (1,000 by default) a rank is looked up exactly.
  const bands = preQueue ? [queues[0].config.positionCache.exactBelowRank, 10_000] : [100, 1000, 10_000];
  const redisNow = async () => {
    const [s, us] = await control.time();
    return Number(s) * 1000 + Math.floor(Number(us) / 1000);
  };

  try {
    await control.flushall();
    if (preQueue) await queues[0].setControls({ opensAt: (await redisNow()) + 600_000, shuffle: Boolean(preQueue.shuffle) });
    // 1. The crowd enters, each member through its home instance (sticky routing).
    const t0 = performance.now();
    const interval = new Float64Array(N);
    await forEachConcurrent(N, 256, async (i) => {
      const p = await home(i).enter(memberIds[i]);
      interval[i] = p.pollingIntervalSeconds;
    });
    out.enterSeconds = round((performance.now() - t0) / 1000, 1);
    log(`  ${N.toLocaleString('en-US')} members entered through ${K} instances in ${out.enterSeconds} s${preQueue ? ` (a ${preQueue.shuffle ? 'shuffled' : 'FIFO'} pre-queue)` : ''}`);
    if (preQueue) {
      const k = `{waitgate:${NAME}}`;
      const [pb, sb] = (await control.hmget(`${k}:meta`, 'pb', 'sb')).map(Number);
      out.preQueue = { preQueued: await control.zcount(`${k}:waiting`, pb, `(${sb}`), pb, sb };
      // The opening: moved to leadMs ahead (moving a pending draw's opening keeps the draw).
      const opensAt = (await redisNow()) + (preQueue.leadMs ?? 300);
      await queues[0].setControls({ opensAt });
      while ((await redisNow()) < opensAt) await sleep(10);
      log(`  opened: ${out.preQueue.preQueued.toLocaleString('en-US')} pre-queued members`);
    }

    // 2. Nobody left yet: FIFO, the estimated ranks must be exact; a drawn pre-queue's scores are not evenly spread, so there the interpolation errs.
    out.accuracyBeforeLeaves = await compareRanks({ control, memberIds, pick: (i) => home(i), alive: () => true, bands });
    log(`  ranks before anyone left${preQueue ? ' (caches from the enters)' : ''}: max error ${out.accuracyBeforeLeaves.maxAbsError} (exact: ${out.accuracyBeforeLeaves.maxAbsError === 0}), max rel. ${(out.accuracyBeforeLeaves.maxRelError * 100).toFixed(2)}%, p99 ${(out.accuracyBeforeLeaves.p99RelError * 100).toFixed(2)}%`);
    if (preQueue) {
      // The same with fresh instances: each learns a member from one exact poll after the opening.
      const fresh = instancesOf();
      await forEachConcurrent(N, 256, (i) => fresh.queues[i % K].position(memberIds[i]));
      out.accuracyFreshCaches = await compareRanks({ control, memberIds, pick: (i) => fresh.queues[i % K], alive: () => true, bands });
      out.accuracyFreshCaches.note = 'fresh instances, each member learned from one exact poll after the opening; nobody left or admitted';
      log(`  ranks, fresh caches (learned after the opening): max rel. error ${(out.accuracyFreshCaches.maxRelError * 100).toFixed(2)}%, p99 ${(out.accuracyFreshCaches.p99RelError * 100).toFixed(2)}%, mean ${(out.accuracyFreshCaches.meanRelError * 100).toFixed(3)}%`);
      // The polling phase runs on the fresh instances unless told otherwise: the caches
      // the enters left hold ranks from before the draw was complete (see the report).
      out.preQueue.pollThrough = preQueue.pollThrough ?? 'fresh';
      if (out.preQueue.pollThrough === 'fresh') ({ stores, queues } = fresh);
    }

    // 3. The crowd polls at the hinted intervals while every instance runs an admitter and some members leave.
    const state = new Uint8Array(N); // WAITING / READY / LEFT
    const admittedAt = new Float64Array(N).fill(NaN);
    const readyAt = new Float64Array(N).fill(NaN);
    const intervalAtAdmission = new Float64Array(N).fill(NaN);
    const staleAnswers = new Uint32Array(N); // WAITING answers after the member was admitted
    let lostAnswers = 0;
    let pollErrors = 0;
    const slots = new Map();
    let lastSlot = Math.floor(performance.now() / TICK_MS); // the next slot the ticker will run
    const schedule = (i, at) => {
      const slot = Math.max(lastSlot, Math.floor(at / TICK_MS)); // never into a slot already run
      let list = slots.get(slot);
      if (!list) slots.set(slot, (list = []));
      list.push(i);
    };
    for (const q of queues) {
      q.on('admitted', (list) => {
        const now = performance.now();
        for (const { memberId } of list) {
          const i = index.get(memberId);
          admittedAt[i] = now;
          intervalAtAdmission[i] = interval[i];
        }
      });
      q.on('error', () => undefined);
    }
    let routing = (i) => home(i);
    let phasePolls = 0;
    const poll = async (i) => {
      if (state[i] !== WAITING) return;
      phasePolls++;
      let p;
      const askedAt = performance.now();
      try {
        p = await routing(i).position(memberIds[i]);
      } catch {
        pollErrors++;
        schedule(i, performance.now() + 1000);
        return;
      }
      const now = performance.now();
      if (state[i] !== WAITING) return;
      if (p.status === 'READY') {
        state[i] = READY;
        readyAt[i] = now;
        return;
      }
      if (p.status === 'NOT_ENTERED') {
        lostAnswers++;
        state[i] = LEFT;
        return;
      }
      // A poll asked after the admission (one already in flight may rightly have been answered before it).
      if (admittedAt[i] < askedAt) staleAnswers[i]++;
      interval[i] = p.pollingIntervalSeconds;
      schedule(i, now + p.pollingIntervalSeconds * 1000 * (1 - JITTER + 2 * JITTER * Math.random()));
    };
    let running = true;
    const ticker = (async () => {
      while (running) {
        const nowSlot = Math.floor(performance.now() / TICK_MS);
        for (let s = lastSlot; s <= nowSlot; s++) {
          const list = slots.get(s);
          if (!list) continue;
          slots.delete(s);
          for (const i of list) void poll(i);
        }
        lastSlot = nowSlot + 1;
        await sleep(TICK_MS / 2);
      }
    })();

    const start = performance.now();
    for (let i = 0; i < N; i++) schedule(i, start + Math.random() * interval[i] * 1000);
    // Leavers: spread over the first 80% of the phase, each through its home instance.
    const leavers = [];
    for (let i = 0; i < N; i++) if (Math.random() < leaveFraction) leavers.push(i);
    const leaveTimers = leavers.map((i) =>
      setTimeout(async () => {
        if (state[i] !== WAITING) return;
        state[i] = LEFT;
        await home(i).leave(memberIds[i]).catch(() => undefined);
      }, Math.random() * phaseSeconds * 800),
    );

    const statsBefore = await commandStats(control);
    const countsBefore = stores.map((s) => s.snapshotCounts());
    const admitters = queues.map((q) => q.startAdmitter({ intervalMs: 1000 }));
    await sleep(phaseSeconds * 1000);
    await Promise.all(admitters.map((a) => a.stop()));
    leaveTimers.forEach(clearTimeout);
    // Let the members admitted last poll once more (admitters stopped): up to the longest
    // interval they may have been given near the head (3 s) plus jitter.
    await sleep(4000);
    const statsAfter = await commandStats(control);
    const countsAfter = stores.map((s) => s.snapshotCounts());
    const sticky = summarizePhase({ statsBefore, statsAfter, countsBefore, countsAfter, polls: phasePolls, seconds: (performance.now() - start) / 1000 });
    out.sticky = sticky;
    log(`  sticky routing: ${sticky.polls.toLocaleString('en-US')} polls (${sticky.pollsPerSecond}/s), ${sticky.pollStoreCallsPerPoll} store calls per poll, ${sticky.redisScriptCallsPerPoll} Redis script calls per poll`);

    // READY within one polling interval.
    // Members who left just as they were admitted (before their next poll) never look again: not counted.
    const admitted = [];
    let leftBeforeSeeingReady = 0;
    for (let i = 0; i < N; i++) {
      if (Number.isNaN(admittedAt[i])) continue;
      if (state[i] === LEFT && Number.isNaN(readyAt[i])) leftBeforeSeeingReady++;
      else admitted.push(i);
    }
    const latencies = admitted.filter((i) => !Number.isNaN(readyAt[i])).map((i) => readyAt[i] - admittedAt[i]).sort((a, b) => a - b);
    const overInterval = admitted.filter((i) => readyAt[i] - admittedAt[i] > intervalAtAdmission[i] * 1000 * (1 + JITTER));
    out.ready = {
      admitted: admitted.length,
      leftBeforeSeeingReady,
      sawReady: latencies.length,
      firstPollAfterAdmissionWasReady: admitted.filter((i) => staleAnswers[i] === 0 && !Number.isNaN(readyAt[i])).length,
      staleWaitingAnswersAfterAdmission: admitted.reduce((a, i) => a + staleAnswers[i], 0),
      membersWithStaleAnswer: admitted.filter((i) => staleAnswers[i] > 0).length,
      intervalAtAdmissionSeconds: [...new Set(admitted.map((i) => intervalAtAdmission[i]))],
      latencyMs: { p50: round(quantileSorted(latencies, 0.5), 0), p99: round(quantileSorted(latencies, 0.99), 0), max: round(latencies[latencies.length - 1], 0) },
      slowerThanOneInterval: overInterval.length,
    };
    log(`  READY: ${out.ready.admitted} admitted, ${out.ready.firstPollAfterAdmissionWasReady} saw READY on their first poll after admission; max ${out.ready.latencyMs.max} ms, ${out.ready.slowerThanOneInterval} later than one interval`);

    // 4. After members left: estimated vs exact ranks (admitters stopped, snapshots refreshed).
    await sleep(refreshMs + 50);
    out.accuracyAfterLeaves = await compareRanks({ control, memberIds, pick: (i) => home(i), alive: (i) => state[i] === WAITING, bands });
    out.accuracyAfterLeaves.left = leavers.filter((i) => state[i] === LEFT).length;
    log(`  ranks after ${out.accuracyAfterLeaves.left} left: mean rel. error ${(out.accuracyAfterLeaves.meanRelError * 100).toFixed(3)}%, max ${(out.accuracyAfterLeaves.maxRelError * 100).toFixed(2)}% (rank ${out.accuracyAfterLeaves.maxRelErrorAt.exact})`);

    // 5. Random routing (no sticky sessions): the first poll of a member on an instance
    // that never saw it is an exact lookup. Same crowd, admitters off.
    if (randomPhaseSeconds > 0) {
      routing = () => queues[(Math.random() * K) | 0];
      const sb = await commandStats(control);
      const cb = stores.map((s) => s.snapshotCounts());
      phasePolls = 0;
      const t = performance.now();
      await sleep(randomPhaseSeconds * 1000);
      out.randomRouting = summarizePhase({ statsBefore: sb, statsAfter: await commandStats(control), countsBefore: cb, countsAfter: stores.map((s) => s.snapshotCounts()), polls: phasePolls, seconds: (performance.now() - t) / 1000 });
      out.randomRouting.note = `first ${randomPhaseSeconds} s after switching from sticky to random routing: includes each member's first poll on the ${K - 1} instances that had not seen it (exact lookups)`;
      log(`  random routing (first ${randomPhaseSeconds} s): ${out.randomRouting.pollStoreCallsPerPoll} store calls per poll`);
    }
    running = false;
    await ticker;
    out.pollErrors = pollErrors;
    out.lostAnswers = lostAnswers;
    return out;
  } finally {
    await Promise.all([...clients, control].map((c) => c.quit().catch(() => c.disconnect())));
  }
}

function summarizePhase({ statsBefore, statsAfter, countsBefore, countsAfter, polls, seconds }) {
  const diff = diffStats(statsBefore, statsAfter);
  const { scripts, all } = countCommands(diff);
  const calls = countsAfter.map((c, i) => diffCounts(countsBefore[i], c));
  const sum = (m) => calls.reduce((a, c) => a + (c[m] ?? 0), 0);
  // touch: signs of life of the members polled (builds with abandonAfterSeconds), also caused by polls.
  const pollCalls = sum('position') + sum('queueSnapshot') + sum('touch');
  const otherCalls = sum('admit') + sum('leave') + sum('enter') + sum('stats');
  return {
    seconds: round(seconds, 1),
    polls,
    pollsPerSecond: round(polls / seconds, 0),
    storeCalls: { position: sum('position'), queueSnapshot: sum('queueSnapshot'), touch: sum('touch'), admit: sum('admit'), leave: sum('leave') },
    pollStoreCallsPerPoll: round(pollCalls / polls, 4),
    // Redis' own count: EVAL/EVALSHA calls in the phase, minus the admit and leave calls (counted in process).
    redisScriptCallsPerPoll: round((scripts - otherCalls) / polls, 4),
    redisScriptCalls: scripts,
    // Every command Redis ran, including those inside scripts and the admits/leaves: an upper bound.
    redisAllCommandsPerPoll: round(all / polls, 4),
  };
}

/** Estimated rank (home instance's position()) vs exact ZRANK for every member still waiting. */
async function compareRanks({ control, memberIds, pick, alive, bands = [100, 1000, 10_000] }) {
  const key = `{waitgate:${NAME}}:waiting`;
  const errors = [];
  let maxAbs = 0;
  let maxRel = 0;
  let maxRelAt = null;
  let within1 = 0;
  let statusMismatch = 0;
  const relByBand = {};
  for (let from = 0; from < memberIds.length; from += 5000) {
    const chunk = [];
    for (let i = from; i < Math.min(from + 5000, memberIds.length); i++) if (alive(i)) chunk.push(i);
    const reported = await Promise.all(chunk.map((i) => pick(i).position(memberIds[i])));
    const pipeline = control.pipeline();
    for (const i of chunk) pipeline.zrank(key, memberIds[i]);
    const exact = (await pipeline.exec()).map(([, v]) => v);
    chunk.forEach((i, j) => {
      const p = reported[j];
      const e = exact[j];
      if (e === null || p.status !== 'WAITING') {
        statusMismatch += e === null && p.status !== 'WAITING' ? 0 : 1;
        return;
      }
      const abs = Math.abs(p.rank - e);
      const rel = e === 0 ? (abs === 0 ? 0 : 1) : abs / e;
      errors.push(rel);
      if (abs > maxAbs) maxAbs = abs;
      if (rel > maxRel) {
        maxRel = rel;
        maxRelAt = { exact: e, reported: p.rank };
      }
      if (rel <= 0.01) within1++;
      const at = bands.findIndex((limit) => e < limit);
      const band = at === 0 ? `<${bands[0]}` : at === -1 ? `>=${bands[bands.length - 1]}` : `${bands[at - 1]}-${bands[at] - 1}`;
      const b = (relByBand[band] ??= { members: 0, max: 0, sum: 0, errors: [], maxAt: null });
      b.members++;
      b.sum += rel;
      b.errors.push(rel);
      if (rel > b.max) {
        b.max = rel;
        b.maxAt = { exact: e, reported: p.rank };
      }
    });
  }
  // In rank order.
  const labels = [`<${bands[0]}`, ...bands.slice(1).map((limit, i) => `${bands[i]}-${limit - 1}`), `>=${bands[bands.length - 1]}`];
  const byBand = Object.fromEntries(labels.filter((l) => relByBand[l]).map((l) => [l, relByBand[l]]));
  for (const b of Object.values(byBand)) {
    b.mean = round(b.sum / b.members, 5);
    b.p99 = round(quantileSorted(b.errors.sort((x, y) => x - y), 0.99), 5);
    b.max = round(b.max, 5);
    delete b.sum;
    delete b.errors;
  }
  const sorted = errors.sort((a, b) => a - b);
  return {
    compared: errors.length,
    statusMismatch,
    maxAbsError: maxAbs,
    meanRelError: round(mean(errors), 6),
    p99RelError: round(quantileSorted(sorted, 0.99), 5),
    maxRelError: round(maxRel, 5),
    maxRelErrorAt: maxRelAt,
    within1Percent: round(within1 / Math.max(1, errors.length), 5),
    byExactRank: byBand,
  };
}
