#!/usr/bin/env node
// A model (no Redis, no waitgate code) of ONE queue split over K sub-queues on K Redis
// shards, the design in docs/scaling.md: what it costs in FIFO order, admission rate and
// rank accuracy. Members are hashed to a sub-queue (hash(memberId) mod K, modelled as a
// seeded uniform draw); the whole crowd is waiting when admission starts.
//
// Admission policies:
//   split        every sub-queue admits at rate / K on its own (independent token buckets)
//   coordinated  one admitter takes each tick's budget (rate x tick) from the sub-queues'
//                heads in entry-time order (a K-way merge of the heads; entry times carry a
//                per-shard clock offset of up to +-skewMs)
// Ranks: what one sub-queue knows (K x its own rank) vs the true global rank, and the sum
// of the K sub-queues' ranks at the member's entry time (exact up to the clock offsets).
//
//   node bench/sim/sharded-queue.mjs [--members=1000000] [--shards=4] [--rate=500] [--seconds=600]
//     [--skew-ms=5] [--arrival-seconds=10] [--slow-shard-factor=0.5]   (writes bench/results/sharded-queue-sim-latest.json)

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mulberry32 } from '../lib/seeded-random.mjs';
import { quantileSorted, round } from '../lib/stats.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name, fallback) => Number(args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback);
const N = opt('members', 1_000_000);
const K = opt('shards', 4);
const RATE = opt('rate', 500);
const SECONDS = opt('seconds', 600);
const SKEW_MS = opt('skew-ms', 5);
const ARRIVAL_S = opt('arrival-seconds', 10);
const SLOW = opt('slow-shard-factor', 0.5); // the failure case: shard 0 admits at this share of its rate for the first half
const TICK_S = 0.25;
const BUDGET = RATE * TICK_S;
const TICKS = Math.round(SECONDS / TICK_S);
const out = args.find((a) => a.startsWith('--out='))?.slice(6) ?? join(here, '..', 'results', 'sharded-queue-sim-latest.json');

const random = mulberry32(14);
// Arrival order is the index; arrival times spread evenly over ARRIVAL_S.
const arrivalMs = new Float64Array(N);
const shard = new Uint8Array(N);
const offsets = Array.from({ length: K }, () => (random() * 2 - 1) * SKEW_MS);
for (let i = 0; i < N; i++) {
  arrivalMs[i] = (i / N) * ARRIVAL_S * 1000;
  shard[i] = Math.floor(random() * K);
}
const lists = Array.from({ length: K }, () => []);
for (let i = 0; i < N; i++) lists[shard[i]].push(i);

/** Fenwick tree over arrival order: how many of the first i members are still waiting. */
class Waiting {
  constructor(n) {
    this.t = new Int32Array(n + 1);
    for (let i = 1; i <= n; i++) {
      this.t[i] += 1;
      const j = i + (i & -i);
      if (j <= n) this.t[j] += this.t[i];
    }
  }
  remove(i) {
    for (let x = i + 1; x < this.t.length; x += x & -x) this.t[x]--;
  }
  /** Waiting members with arrival index < i. */
  before(i) {
    let s = 0;
    for (let x = i; x > 0; x -= x & -x) s += this.t[x];
    return s;
  }
}

function run(policy, { slow = false } = {}) {
  const admittedTick = new Int32Array(N).fill(-1);
  const heads = new Int32Array(K);
  const carry = new Float64Array(K);
  const waiting = new Waiting(N);
  const perTick = [];
  let rankCheck = null;
  const shardRate = (k, tick) => (slow && k === 0 && tick < TICKS / 2 ? SLOW : 1);
  for (let tick = 0; tick < TICKS; tick++) {
    let admitted = 0;
    if (policy === 'split') {
      for (let k = 0; k < K; k++) {
        carry[k] += (BUDGET / K) * shardRate(k, tick);
        while (carry[k] >= 1 && heads[k] < lists[k].length) {
          const i = lists[k][heads[k]++];
          admittedTick[i] = tick;
          waiting.remove(i);
          carry[k] -= 1;
          admitted++;
        }
        if (carry[k] > BUDGET) carry[k] = BUDGET; // a bucket holds at most a burst
      }
    } else {
      // The oldest heads first (entry time as each shard's clock reads it); a slow shard admits at most its share of the budget.
      const cap = Array.from({ length: K }, (_, k) => (shardRate(k, tick) < 1 ? Math.floor((BUDGET * shardRate(k, tick)) / K) : Infinity));
      const took = new Int32Array(K);
      for (let b = 0; b < BUDGET; b++) {
        let best = -1;
        let bestAt = Infinity;
        for (let k = 0; k < K; k++) {
          if (heads[k] >= lists[k].length || took[k] >= cap[k]) continue;
          const at = arrivalMs[lists[k][heads[k]]] + offsets[k];
          if (at < bestAt) {
            bestAt = at;
            best = k;
          }
        }
        if (best < 0) break;
        const i = lists[best][heads[best]++];
        admittedTick[i] = tick;
        waiting.remove(i);
        took[best]++;
        admitted++;
      }
    }
    perTick.push(admitted);
    if (tick === Math.floor(TICKS / 2)) rankCheck = checkRanks(waiting, heads);
  }
  // Against global FIFO at the same rate: member i would have been admitted at tick floor(i / BUDGET).
  const delays = [];
  let maxDisplacement = 0;
  let order = 0;
  const byTick = [];
  for (let i = 0; i < N; i++) if (admittedTick[i] >= 0) (byTick[admittedTick[i]] ??= []).push(i);
  for (const list of byTick) {
    if (!list) continue;
    for (const i of list) {
      delays.push((admittedTick[i] - Math.floor(i / BUDGET)) * TICK_S);
      maxDisplacement = Math.max(maxDisplacement, Math.abs(order - i));
      order++;
    }
  }
  const abs = delays.map(Math.abs).sort((a, b) => a - b);
  const admittedTotal = perTick.reduce((a, b) => a + b, 0);
  const firstHalf = perTick.slice(0, TICKS / 2).reduce((a, b) => a + b, 0);
  return {
    admitted: admittedTotal,
    admittedPerSecond: round(admittedTotal / SECONDS, 1),
    admittedPerSecondFirstHalf: round(firstHalf / (SECONDS / 2), 1),
    waitVsGlobalFifoSeconds: {
      p50: round(quantileSorted(abs, 0.5), 2),
      p99: round(quantileSorted(abs, 0.99), 2),
      max: round(abs[abs.length - 1], 2),
      meanSigned: round(delays.reduce((a, b) => a + b, 0) / delays.length, 3),
    },
    maxDisplacementPositions: maxDisplacement,
    ranksAtHalfTime: rankCheck,
  };
}

/** 20,000 waiting members: K x own-shard rank, and the sum over shards at its entry time, vs the true global rank. */
function checkRanks(waiting, heads) {
  const r = mulberry32(7);
  const kTimes = [];
  const sums = [];
  for (let n = 0; n < 20_000; n++) {
    const k = Math.floor(r() * K);
    const list = lists[k];
    if (heads[k] >= list.length) continue;
    const pos = heads[k] + Math.floor(r() * (list.length - heads[k]));
    const i = list[pos];
    const trueRank = waiting.before(i);
    if (trueRank < 1000) continue;
    const ownRank = pos - heads[k]; // FIFO within a shard: everyone between the head and it waits
    kTimes.push(Math.abs(K * ownRank - trueRank) / trueRank);
    // Sum of ranks at its entry time, each shard's members ordered by that shard's clock.
    const at = arrivalMs[i] + offsets[k];
    let sum = 0;
    for (let j = 0; j < K; j++) {
      const lj = lists[j];
      let lo = heads[j];
      let hi = lj.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (arrivalMs[lj[mid]] + offsets[j] < at) lo = mid + 1;
        else hi = mid;
      }
      sum += lo - heads[j];
    }
    sums.push(Math.abs(sum - trueRank) / trueRank);
  }
  const summary = (v) => {
    v.sort((a, b) => a - b);
    return { compared: v.length, p50: round(quantileSorted(v, 0.5), 5), p99: round(quantileSorted(v, 0.99), 5), max: round(v[v.length - 1], 5) };
  };
  return { kTimesOwnRank: summary(kTimes), sumOfShardRanksAtEntryTime: summary(sums) };
}

const t0 = performance.now();
const result = {
  date: new Date().toISOString(),
  model: 'no Redis: sub-queues as arrays, admission in ticks of 250 ms; the crowd is waiting when admission starts',
  settings: {
    members: N,
    shards: K,
    ratePerSecond: RATE,
    seconds: SECONDS,
    tickSeconds: TICK_S,
    arrivalSeconds: ARRIVAL_S,
    clockOffsetsMs: offsets.map((v) => round(v, 2)),
    slowShardFactor: SLOW,
  },
  shardSizes: lists.map((l) => l.length),
  split: run('split'),
  coordinated: run('coordinated'),
  splitSlowShard: run('split', { slow: true }),
  coordinatedSlowShard: run('coordinated', { slow: true }),
};
result.seconds = round((performance.now() - t0) / 1000, 1);
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
for (const name of ['split', 'coordinated', 'splitSlowShard', 'coordinatedSlowShard']) {
  const v = result[name];
  console.log(
    `${name.padEnd(22)} admitted ${v.admittedPerSecond}/s (first half ${v.admittedPerSecondFirstHalf}/s); wait vs global FIFO |p50| ${v.waitVsGlobalFifoSeconds.p50} s, |p99| ${v.waitVsGlobalFifoSeconds.p99} s, max ${v.waitVsGlobalFifoSeconds.max} s; max displacement ${v.maxDisplacementPositions}; rank K x own: p99 ${(v.ranksAtHalfTime.kTimesOwnRank.p99 * 100).toFixed(2)}% max ${(v.ranksAtHalfTime.kTimesOwnRank.max * 100).toFixed(2)}%; sum at entry time: max ${(v.ranksAtHalfTime.sumOfShardRanksAtEntryTime.max * 100).toFixed(3)}%`,
  );
}
console.log(`wrote ${out} (${result.seconds} s)`);
