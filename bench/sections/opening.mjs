// A scheduled, shuffled opening (issue #10): 1,000,000 members pre-queued before
// opensAt, then the opening. Measures
//   (a) the longest call of any waitgate script during the whole run (SLOWLOG with
//       slowlog-log-slower-than 0: every command's duration, drained often);
//   (b) the first admit() after the opening at 1,000,000 pre-queued vs 10,000
//       (interleaved rounds: both queues open at the same moment each round, the one
//       admitted first alternates; medians and the median of per-round ratios);
//   (c) that the members admitted are the draw's first ones, in the draw's order
//       (drawOrder, the package's own audit function, over every pre-queued id).
//
// Per round, for each size: a queue gets setControls({ opensAt: 10 min ahead, shuffle,
// rate, burst }); the pre-queue is loaded (bench/lib/bulk-enter.mjs bulkPreQueue: plain
// ZADD with the real draw scores, pb + draw, read from meta's pb and seed) and then
// `preQueueEnters` more members join through queue.enter() (enterIfAbsent at full size,
// ZRANK of a drawn place); admit() is called once (admits nobody: before opensAt; it
// also loads the script) and some members poll (positionCache: queueSnapshot at full
// size). Then both queues' opening is moved to `leadMs` ahead (Redis time), the bench
// waits for it, and the first admit() of each is timed (Node wall time; Redis time =
// the durations of its popAndIssue calls in SLOWLOG). For `afterMs` after that each
// queue is admitted every 100 ms while new members enter (after the opening: behind
// the pre-queue) and pre-queued members poll. Then the admitted order is checked.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { drawOrder, MemoryStore, RedisStore, WaitgateConfigError, WaitingQueue } from 'waitgate';
import { bulkPreQueue, drawOf, forEachConcurrent, ids, queueKeys } from '../lib/bulk-enter.mjs';
import { redisMainThreadCpuUs, slowlogRecorder } from '../lib/redis-info.mjs';
import { median, quantileSorted, round } from '../lib/stats.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const MAX_SCRIPT_MS = 50; // the target: no waitgate script call longer than this

/**
 * The bulk-loaded crowd never polls, so where the build drops silent members at their
 * turn (`abandonAfterSeconds`, default 300 s), it is turned off: this section measures
 * the opening, not the abandonment. Builds without the option get nothing.
 */
function abandonmentOff() {
  try {
    new WaitingQueue({ store: new MemoryStore(), name: 'probe', abandonAfterSeconds: null });
    return { abandonAfterSeconds: null };
  } catch {
    return {};
  }
}

export async function runOpening({
  url,
  sizes = [10_000, 1_000_000],
  rounds = 5,
  preQueueEnters = 2000,
  leadMs = 1500,
  afterMs = 2000,
  admitRatePerSecond = 1000,
  admitBurst = 1000,
  redisPid = null,
  log = console.log,
}) {
  // Time Redis' main thread was ready to run but waited for a CPU (Linux /proc schedstat,
  // µs): on a shared machine, what inflates a SLOWLOG duration without any work.
  const runQueueWaitUs = () => {
    if (!redisPid) return NaN;
    try {
      return Math.round(Number(readFileSync(`/proc/${redisPid}/schedstat`, 'utf8').split(' ')[1]) / 1000);
    } catch {
      return NaN;
    }
  };
  const waitStart = runQueueWaitUs();
  let waitMark = waitStart;
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  const control = new Redis(url, { maxRetriesPerRequest: 1 });
  const slowlog = slowlogRecorder(control, { slowerThanUs: 0 });
  const small = Math.min(...sizes);
  const big = Math.max(...sizes);
  const out = {
    settings: {
      sizes,
      rounds,
      preQueueEnters,
      leadMs,
      afterMs,
      admitRatePerSecond,
      admitBurst,
      slowlogSlowerThanUs: 0,
      maxScriptMsTarget: MAX_SCRIPT_MS,
      memberIds: "16 characters, 'shopper-10000000'…",
    },
    rounds: [],
  };
  // Every command's duration, by waitgate script (or by plain command for the rest).
  const byScript = {};
  const byCommand = {};
  let longest = null; // the longest waitgate script call
  const record = (entries, phase) => {
    const waitNow = runQueueWaitUs();
    const phaseWaitUs = waitNow - waitMark;
    waitMark = waitNow;
    for (const e of entries) {
      if (e.script !== null && e.tag?.startsWith('{waitgate:')) {
        const s = (byScript[e.script] ??= { calls: 0, maxUs: 0, totalUs: 0, maxPhase: null, durations: [] });
        s.calls++;
        s.totalUs += e.us;
        s.durations.push(e.us);
        if (e.us > s.maxUs) {
          s.maxUs = e.us;
          s.maxPhase = phase;
        }
        if (!longest || e.us > longest.us) {
          // What it spent its time on: the commands it ran (logged with it), longest first.
          const inner = [...e.inner].sort((a, b) => b.us - a.us);
          longest = {
            script: e.script,
            us: e.us,
            phase,
            phaseRedisRunQueueWaitUs: Number.isNaN(phaseWaitUs) ? null : phaseWaitUs,
            queue: e.tag,
            innerCommands: e.inner.length,
            innerUs: e.inner.reduce((a, c) => a + c.us, 0),
            longestInner: inner.slice(0, 3),
          };
        }
      } else if (!/^(slowlog|config|info|multi|exec|ping|client|hello|select|time|flushall)$/.test(e.command)) {
        const c = (byCommand[e.command] ??= { calls: 0, maxUs: 0, maxPhase: null });
        c.calls++;
        if (e.us > c.maxUs) {
          c.maxUs = e.us;
          c.maxPhase = phase;
        }
      }
    }
    return entries;
  };
  const drain = async (phase) => record(await slowlog.drain(), phase);
  const redisNow = async () => {
    const [s, us] = await control.time();
    return Number(s) * 1000 + Math.floor(Number(us) / 1000);
  };
  const all = ids('shopper-', 10_000_000, 10_000_000 + big);
  const extraOptions = abandonmentOff();
  out.settings.queueOptions = { admitRatePerSecond, admitBurst, positionCache: true, ...extraOptions };

  try {
    await control.flushall();
    await slowlog.start();
    for (let r = 0; r < rounds; r++) {
      await control.flushall();
      await sleep(200);
      await drain('flush'); // FLUSHALL of the last round's million is not a waitgate call
      const round_ = { round: r + 1, loadAverageAtStart: os.loadavg().map((v) => round(v, 2)), queues: {} };
      const queues = {};
      // Load the big queue first in every round (the small one's load then runs on a Redis already holding the big one, as at the opening).
      for (const n of [...sizes].sort((a, b) => b - a)) {
        const name = `opening-${n}-r${r + 1}`;
        const q = new WaitingQueue({
          store: new RedisStore({ client }),
          name,
          admitRatePerSecond,
          admitBurst,
          positionCache: true,
          operationTimeoutMs: 30_000,
          ...extraOptions,
        });
        q.on('error', () => undefined);
        const t0 = performance.now();
        const set = await q.setControls({ opensAt: (await redisNow()) + 600_000, shuffle: true, admitRatePerSecond, admitBurst });
        await drain('setControls (a new schedule, empty queue)');
        const bulkIds = all.slice(0, n - preQueueEnters);
        const loaded = await bulkPreQueue(control, name, bulkIds);
        await drain('bulk pre-queue load (plain ZADD)');
        // Real enters into the full pre-queue: enterIfAbsent with a drawn place (ZRANK).
        const enterIds = ids('late-shopper-', 0, preQueueEnters);
        const enterRanksNull = { n: 0 };
        await forEachConcurrent(preQueueEnters, 64, async (i) => {
          const p = await q.enter(enterIds[i]);
          if (p.status !== 'WAITING') throw new Error(`enter into the pre-queue answered ${p.status}`);
          if (p.rank === null && p.opensAt !== null) enterRanksNull.n++;
        });
        await drain(`enter into the pre-queue at ${n.toLocaleString('en-US')}`);
        // The Lua draw equals the bench's (and so drawOrder's): the real enters' scores.
        const k = queueKeys(name);
        const pipe = control.pipeline();
        for (const id of enterIds) pipe.zscore(k.waiting, id);
        const scores = (await pipe.exec()).map(([, v]) => Number(v));
        const luaDrawMismatches = enterIds.filter((id, i) => scores[i] - loaded.pb !== drawOf(loaded.seed, id)).length;
        // An admitter before the opening admits nobody (and loads the script).
        const early = await q.admit();
        if (early.length !== 0) throw new Error(`admit() before the opening admitted ${early.length}`);
        // A shuffled pre-queue with members keeps its order rule: refused (one ZCOUNT).
        let shuffleChangeRefused = false;
        try {
          await q.setControls({ shuffle: false });
        } catch (e) {
          shuffleChangeRefused = e instanceof WaitgateConfigError;
        }
        // Members poll before the opening (positionCache: a snapshot of the full line).
        // (The first poll of a member on an instance is exact; the second is estimated from a snapshot.)
        for (let pass = 0; pass < 2; pass++) await Promise.all(Array.from({ length: 100 }, (_, i) => q.position(bulkIds[(i * 4999) % bulkIds.length])));
        await drain(`before the opening at ${n.toLocaleString('en-US')}`);
        const before = await q.controls();
        queues[n] = { q, name, seed: loaded.seed, pb: loaded.pb, bulkIds, enterIds, admitted: [] };
        round_.queues[n] = {
          name,
          loadSeconds: round((performance.now() - t0) / 1000, 1),
          waitingBeforeOpening: await control.zcard(k.waiting),
          enterRankHiddenBeforeOpening: enterRanksNull.n === preQueueEnters,
          luaDrawMismatches,
          shuffleChangeRefused,
          seedHiddenBeforeOpening: before.drawSeed === null,
          commitment: set.drawCommitment,
        };
      }

      // Both open at the same moment (Redis time); moving a pending draw's opening keeps the draw.
      const opensAt = (await redisNow()) + leadMs;
      for (const n of sizes) {
        const c = await queues[n].q.setControls({ opensAt });
        if (c.drawCommitment !== round_.queues[n].commitment) throw new Error('moving the opening changed the draw commitment');
      }
      await drain('setControls (move the opening)');
      const offset = (await redisNow()) - Date.now();
      await sleep(Math.max(0, opensAt - offset - Date.now() + 5));
      while ((await redisNow()) < opensAt) await sleep(1);
      await drain('waiting for the opening');

      // (b) The first admit() after the opening, each queue in turn (the order alternates by round).
      const order = r % 2 === 0 ? [...sizes].sort((a, b) => a - b) : [...sizes].sort((a, b) => b - a);
      for (const n of order) {
        const { q, name } = queues[n];
        const cpuBefore = await redisMainThreadCpuUs(control);
        const waitBefore = runQueueWaitUs();
        const t = performance.now();
        const admitted = await q.admit();
        const wallMs = performance.now() - t;
        // Redis' CPU over the call (plus one INFO): what the call cost Redis, whatever else ran on the machine.
        const redisCpuUs = (await redisMainThreadCpuUs(control)) - cpuBefore;
        const redisRunQueueWaitUs = runQueueWaitUs() - waitBefore;
        const entries = await drain(`first admit() at ${n.toLocaleString('en-US')}`);
        const steps = entries.filter((e) => e.script === 'popAndIssue' && e.tag === `{waitgate:${name}}`);
        queues[n].admitted.push(...admitted.map((a) => a.memberId));
        Object.assign(round_.queues[n], {
          firstAdmit: {
            wallMs: round(wallMs, 3),
            redisUs: steps.reduce((a, e) => a + e.us, 0),
            redisCpuUs,
            redisRunQueueWaitUs: Number.isNaN(redisRunQueueWaitUs) ? null : redisRunQueueWaitUs,
            scriptCalls: steps.length,
            stepUs: steps.map((e) => e.us),
            admitted: admitted.length,
          },
        });
      }
      round_.firstAdmitOrder = order;
      round_.wallRatio = round(round_.queues[big].firstAdmit.wallMs / round_.queues[small].firstAdmit.wallMs, 3);
      round_.redisRatio = round(round_.queues[big].firstAdmit.redisUs / round_.queues[small].firstAdmit.redisUs, 3);
      round_.redisCpuRatio = round(round_.queues[big].firstAdmit.redisCpuUs / round_.queues[small].firstAdmit.redisCpuUs, 3);

      // After the opening: admits every 100 ms, new members (behind the pre-queue), polls.
      const afterIds = ids('after-shopper-', 0, 10_000);
      let afterNext = 0;
      const afterRanks = {};
      const stopAt = performance.now() + afterMs;
      let tick = 0;
      while (performance.now() < stopAt) {
        for (const n of sizes) {
          const { q, bulkIds, admitted } = queues[n];
          admitted.push(...(await q.admit()).map((a) => a.memberId));
          const newcomers = afterIds.slice(afterNext, afterNext + 10);
          const ps = await Promise.all(newcomers.map((id) => q.enter(id)));
          (afterRanks[n] ??= []).push(...ps.map((p) => p.rank));
          await Promise.all(Array.from({ length: 20 }, (_, j) => q.position(bulkIds[(tick * 7919 + j * 104_729) % bulkIds.length])));
        }
        afterNext += 10;
        tick++;
        await drain('after the opening (admits every 100 ms, enters, polls)');
        await sleep(100);
      }

      // (c) The admitted order is the draw's order: drawOrder over every pre-queued id, its first ones.
      for (const n of sizes) {
        const { q, seed, bulkIds, enterIds, admitted } = queues[n];
        const published = await q.controls();
        const tOrder = performance.now();
        const expected = drawOrder(published.drawSeed, [...bulkIds, ...enterIds]);
        const orderMs = performance.now() - tOrder;
        let mismatches = 0;
        let firstMismatchAt = null;
        admitted.forEach((id, i) => {
          if (id !== expected[i]) {
            mismatches++;
            firstMismatchAt ??= i;
          }
        });
        const commitmentOk = createHash('sha256').update(Buffer.from(published.drawSeed, 'hex')).digest('hex') === published.drawCommitment;
        // Members who entered after the opening score sb + seq: behind every pre-queued member.
        const k = queueKeys(queues[n].name);
        const sb = Number(await control.hget(k.meta, 'sb'));
        const pipe = control.pipeline();
        for (const id of afterIds.slice(0, afterNext)) pipe.zscore(k.waiting, id);
        const afterScores = (await pipe.exec()).map(([, v]) => Number(v));
        Object.assign(round_.queues[n], {
          admittedTotal: admitted.length,
          drawOrderMismatches: mismatches,
          firstMismatchAt,
          seedPublishedAfterOpening: published.drawSeed === seed,
          commitmentOk,
          drawOrderMs: round(orderMs, 0),
          newcomersRankedBehindPreQueue: afterScores.every((score) => score >= sb) && afterRanks[n].every((rank) => rank !== null),
        });
      }
      await drain('checks');
      const b = round_.queues[big];
      const s = round_.queues[small];
      log(
        `  round ${r + 1}: first admit() ${b.firstAdmit.admitted} of ${big.toLocaleString('en-US')}: ${b.firstAdmit.wallMs.toFixed(2)} ms (Redis ${b.firstAdmit.redisUs} us in ${b.firstAdmit.scriptCalls} calls, CPU ${b.firstAdmit.redisCpuUs} us); ` +
          `of ${small.toLocaleString('en-US')}: ${s.firstAdmit.wallMs.toFixed(2)} ms (Redis ${s.firstAdmit.redisUs} us, CPU ${s.firstAdmit.redisCpuUs} us); ratio wall ${round_.wallRatio}, Redis ${round_.redisRatio}, CPU ${round_.redisCpuRatio}; ` +
          `admitted ${b.admittedTotal} / ${s.admittedTotal}, draw-order mismatches ${b.drawOrderMismatches} / ${s.drawOrderMismatches}; load ${b.loadSeconds} s`,
      );
      out.rounds.push(round_);
    }
  } finally {
    await slowlog.stop().catch(() => undefined);
    await control.flushall().catch(() => undefined);
    await Promise.all([client, control].map((c) => c.quit().catch(() => c.disconnect())));
  }

  // Summaries.
  const per = (n, f) => out.rounds.map((r) => f(r.queues[n]));
  out.firstAdmit = {};
  for (const n of sizes) {
    out.firstAdmit[n] = {
      wallMsMedian: round(median(per(n, (q) => q.firstAdmit.wallMs)), 3),
      wallMs: per(n, (q) => q.firstAdmit.wallMs),
      redisUsMedian: median(per(n, (q) => q.firstAdmit.redisUs)),
      redisUs: per(n, (q) => q.firstAdmit.redisUs),
      redisCpuUsMedian: median(per(n, (q) => q.firstAdmit.redisCpuUs)),
      redisCpuUs: per(n, (q) => q.firstAdmit.redisCpuUs),
      admitted: median(per(n, (q) => q.firstAdmit.admitted)),
      scriptCalls: median(per(n, (q) => q.firstAdmit.scriptCalls)),
    };
  }
  out.firstAdmitRatio = {
    wall: round(median(out.rounds.map((r) => r.wallRatio)), 3),
    redis: round(median(out.rounds.map((r) => r.redisRatio)), 3),
    redisCpu: round(median(out.rounds.map((r) => r.redisCpuRatio)), 3),
    note: `median of per-round ratios ${big.toLocaleString('en-US')} / ${small.toLocaleString('en-US')}`,
  };
  out.drawOrder = {
    admittedChecked: out.rounds.reduce((a, r) => a + sizes.reduce((b, n) => b + r.queues[n].admittedTotal, 0), 0),
    mismatches: out.rounds.reduce((a, r) => a + sizes.reduce((b, n) => b + r.queues[n].drawOrderMismatches, 0), 0),
    luaDrawMismatches: out.rounds.reduce((a, r) => a + sizes.reduce((b, n) => b + r.queues[n].luaDrawMismatches, 0), 0),
    commitmentsOk: out.rounds.every((r) =>
      sizes.every((n) => r.queues[n].commitmentOk && r.queues[n].seedHiddenBeforeOpening && r.queues[n].seedPublishedAfterOpening),
    ),
    newcomersBehind: out.rounds.every((r) => sizes.every((n) => r.queues[n].newcomersRankedBehindPreQueue)),
    shuffleChangeRefused: out.rounds.every((r) => sizes.every((n) => r.queues[n].shuffleChangeRefused)),
  };
  out.scripts = Object.fromEntries(
    Object.entries(byScript)
      .sort((a, b) => b[1].maxUs - a[1].maxUs)
      .map(([name, s]) => {
        const sorted = s.durations.sort((a, b) => a - b);
        return [name, { calls: s.calls, maxUs: s.maxUs, p99Us: quantileSorted(sorted, 0.99), medianUs: quantileSorted(sorted, 0.5), maxPhase: s.maxPhase }];
      }),
  );
  out.otherCommands = Object.fromEntries(Object.entries(byCommand).sort((a, b) => b[1].maxUs - a[1].maxUs));
  out.longestScriptCall = longest && { ...longest, ms: round(longest.us / 1000, 3) };
  out.slowlogOverflowed = slowlog.overflowed;
  out.redisRunQueueWaitTotalMs = redisPid ? round((runQueueWaitUs() - waitStart) / 1000, 0) : null;
  return out;
}
