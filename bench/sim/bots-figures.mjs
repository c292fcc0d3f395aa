// The figures of one bot-swarm scenario (bench/simulate-bots.mjs) and the charts of a run.

import { median, round } from '../lib/stats.mjs';
import { barChart } from '../lib/svg-chart.mjs';

const classOf = (memberId) => memberId.slice(0, memberId.indexOf('-'));
const sumOf = (counts = {}) => Object.values(counts).reduce((a, b) => a + b, 0);

/** Requests of one class by status: { '401': n, ... }. */
function byStatus(requests) {
  const out = {};
  for (const [key, n] of Object.entries(requests)) {
    const status = key.slice(key.lastIndexOf(' ') + 1);
    out[status] = (out[status] ?? 0) + n;
  }
  return out;
}

/**
 * Humans' share of admissions and their wait, store calls and requests per class, Redis
 * commands. A human's wait runs from its first enter to its admission by the shop; one still
 * waiting at the end counts the time waited so far + its last rank / the rate; one not in the
 * line by the end (solving, or refused) the time waited so far (a lower bound).
 */
export function figuresOf({ scenario, config, identity, t0, crowd, shopResult, redisCommands, loadAverage }) {
  const admittedAt = new Map(shopResult.admittedOrder.map((id, i) => [id, shopResult.admittedAt[i]]));
  const counts = { h: 0, b: 0 };
  for (const id of shopResult.admittedOrder) counts[classOf(id)]++;
  const end = t0 + config.horizonSeconds * 1000;
  const waits = [];
  const admittedWaits = [];
  const solves = [];
  crowd.humans.forEach((h, i) => {
    if (!h) return;
    const [arrivedAt, enteredAt, , , lastRank, solveMs] = h;
    if (solveMs > 0) solves.push(solveMs / 1000);
    const at = admittedAt.get(`h-${i}`);
    if (at !== undefined) {
      waits.push((at - arrivedAt) / 1000);
      admittedWaits.push((at - arrivedAt) / 1000);
    } else waits.push((end - arrivedAt) / 1000 + (enteredAt !== null && lastRank !== null ? lastRank / config.admitRatePerSecond : 0));
  });
  const byClass = shopResult.storeCallsByClass ?? {};
  const storeCalls = { humans: sumOf(byClass.h), bots: sumOf(byClass.b), shared: sumOf(byClass.shared) };
  const total = counts.h + counts.b;
  return {
    key: scenario.key,
    label: scenario.label,
    gate: scenario.gate,
    botsSolve: scenario.botsSolve,
    identity,
    humans: config.humans,
    botsCount: config.bots,
    admissions: { total, humans: counts.h, bots: counts.b },
    humansShare: total ? round(counts.h / total, 4) : null,
    humansAdmitted: counts.h,
    humansMedianWaitSeconds: waits.length ? round(median(waits), 1) : null,
    humansMedianWaitAdmittedSeconds: admittedWaits.length ? round(median(admittedWaits), 1) : null,
    humansMedianSolveSeconds: solves.length ? round(median(solves), 2) : null,
    humansOrdered: crowd.humans.filter((h) => h?.[3] !== null).length,
    bots: crowd.bots,
    redis: { commands: redisCommands.all, scriptCalls: redisCommands.scripts },
    storeCalls: { ...storeCalls, botsShare: storeCalls.humans + storeCalls.bots ? round(storeCalls.bots / (storeCalls.humans + storeCalls.bots), 4) : null, byClass },
    requests: { humans: sumOf(crowd.requests.h), bots: sumOf(crowd.requests.b), humansByStatus: byStatus(crowd.requests.h), botsByStatus: byStatus(crowd.requests.b), detail: crowd.requests },
    loadAverage,
    swarm: crowd.swarm,
    shopCpuSeconds: shopResult.shopCpuSeconds,
  };
}

/** docs/images/perf-sim-bots-share.svg and perf-sim-bots-wait.svg from the scenarios that ran. */
export function botCharts({ runs, base, date }) {
  const ran = runs.filter((r) => !r.skipped);
  const sub = `${base.humans.toLocaleString('en-US')} humans + ${base.bots.toLocaleString('en-US')} bots in ${base.arrivalSeconds} s, rate ${base.admitRatePerSecond}/s, ${base.horizonSeconds} s; bot farm ${(base.botHashesPerSecond / 1e6).toLocaleString('en-US')} M hashes/s; 2 cores (${date.slice(0, 10)})`;
  return {
    'perf-sim-bots-share.svg': barChart({
      title: "Humans' share of admissions, and bots' share of the store calls",
      subtitle: sub,
      groups: ran.map((r) => ({ name: r.label, values: [r.humansShare * 100, (r.storeCalls.botsShare ?? 0) * 100] })),
      seriesNames: ["humans' share of admissions", "bots' share of store calls"],
      unit: '%',
    }),
    'perf-sim-bots-wait.svg': barChart({
      title: "Humans' median wait, first enter to admission",
      subtitle: `${sub}; still waiting at the end: time so far + rank / rate`,
      groups: ran.map((r) => ({ name: r.label, values: [r.humansMedianWaitSeconds, r.humansMedianWaitAdmittedSeconds] })),
      seriesNames: ['all humans', 'humans admitted within the run'],
      unit: ' s',
    }),
  };
}
