// Estimate honesty (SPEC §14 "Honest estimates"), from the shoppers' records (bench/sim/shoppers.mjs,
// estimates()): is `estimatedWaitSeconds` the wait a member then actually has?
//
// For each admitted member who entered WAITING and waited at least `minWaitSeconds`:
//  - at entry: the estimate of the enter reply vs the wait from that reply to its admission;
//  - at half its wait: the estimate of the WAITING poll answered nearest to half its wait
//    (within 25-75% of it) vs the wait left from that answer to its admission.
// The error is |estimate - actual| as a % of that actual wait (the wait left, at half way).
// And: the estimate never shrinks while nobody is admitted (consecutive polls of one member
// with no admission step from 1 s before the first was asked to the second's answer; and,
// as a proxy, those whose rank did not fall).

import { lineChart, scatterChart } from '../lib/svg-chart.mjs';

export const TARGETS = { medianPct: 20, p90Pct: 50 };

const quantile = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] : null);
const round1 = (x) => (x === null ? null : Number(x.toFixed(1)));

/** [estimate, actual] pairs -> error figures (% of actual). */
function errorsOf(pairs, estimatedOf) {
  const abs = [];
  const signed = [];
  let unestimated = 0;
  for (const [estimate, actual] of pairs) {
    if (estimate === null || estimate === undefined) {
      unestimated++;
      continue;
    }
    const e = ((estimate - actual) / actual) * 100;
    signed.push(e);
    abs.push(Math.abs(e));
  }
  abs.sort((a, b) => a - b);
  signed.sort((a, b) => a - b);
  const medianPct = round1(quantile(abs, 0.5));
  const p90Pct = round1(quantile(abs, 0.9));
  return {
    members: estimatedOf,
    estimated: abs.length,
    unestimated,
    medianPct,
    p90Pct,
    maxPct: round1(abs.at(-1) ?? null),
    // Signed: > 0 the estimate was longer than the wait, < 0 shorter.
    signedMedianPct: round1(quantile(signed, 0.5)),
    signedP10Pct: round1(quantile(signed, 0.1)),
    signedP90Pct: round1(quantile(signed, 0.9)),
    within20Pct: abs.length ? Number((abs.filter((x) => x <= 20).length / abs.length).toFixed(3)) : null,
    meetsTargets: medianPct !== null && medianPct <= TARGETS.medianPct && p90Pct <= TARGETS.p90Pct,
    /** Share of members (y, 0-1) with an absolute error up to x %, for the chart: x = 0, 5, ... 200. */
    cdf: Array.from({ length: 41 }, (_, i) => {
      const x = i * 5;
      let lo = 0;
      let hi = abs.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (abs[mid] <= x) lo = mid + 1;
        else hi = mid;
      }
      return [x, abs.length ? Number((lo / abs.length).toFixed(4)) : null];
    }),
  };
}

/** The honesty figures of one run from the shoppers' `estimates` (null if the shoppers recorded none). */
export function honestyOf(estimates, { minWaitSeconds = 10, rateChange = null, rateChangedAt = null } = {}) {
  if (!estimates) return null;
  const all = estimates.members.map(([id, enteredAt, atEntry, wait, halfAt, atHalf, leftAtHalf]) => ({
    id,
    enteredAt,
    atEntry,
    wait,
    halfAt,
    atHalf,
    leftAtHalf,
  }));
  const long = all.filter((m) => m.wait >= minWaitSeconds);
  const withHalf = long.filter((m) => m.halfAt !== null && m.leftAtHalf > 0);
  const still = estimates.whileNobodyAdmitted;
  return {
    minWaitSeconds,
    targets: TARGETS,
    rateChange,
    admittedWhoEnteredWaiting: all.length,
    waitedAtLeastMin: long.length,
    atEntry: errorsOf(
      long.map((m) => [m.atEntry, m.wait]),
      long.length,
    ),
    atHalfWait: errorsOf(
      withHalf.map((m) => [m.atHalf, m.leftAtHalf]),
      withHalf.length,
    ),
    // Estimates shown before the rate change could not know of it: the same figures for those
    // shown once the new rate was in force (entry: all of a flash crowd enters before it).
    ...(rateChangedAt !== null
      ? {
          atHalfWaitAfterRateChange: (() => {
            const after = withHalf.filter((m) => m.halfAt >= rateChangedAt);
            return errorsOf(
              after.map((m) => [m.atHalf, m.leftAtHalf]),
              after.length,
            );
          })(),
          // At entry, split by whether the member was admitted before the change (the rate it was
          // told held for its whole wait) or after it (its wait spanned a rate it could not know).
          atEntryAdmittedBeforeRateChange: (() => {
            const before = long.filter((m) => m.enteredAt + m.wait * 1000 < rateChangedAt);
            return errorsOf(
              before.map((m) => [m.atEntry, m.wait]),
              before.length,
            );
          })(),
          atEntryAdmittedAfterRateChange: (() => {
            const spanning = long.filter((m) => m.enteredAt < rateChangedAt && m.enteredAt + m.wait * 1000 >= rateChangedAt);
            return errorsOf(
              spanning.map((m) => [m.atEntry, m.wait]),
              spanning.length,
            );
          })(),
          atEntryAfterRateChange: (() => {
            const after = long.filter((m) => m.enteredAt >= rateChangedAt);
            return errorsOf(
              after.map((m) => [m.atEntry, m.wait]),
              after.length,
            );
          })(),
        }
      : {}),
    // Pairs of consecutive polls of one member: with no admission step at all between them,
    // and (a proxy that also covers a full maxActive, when steps admit a few) whose rank did not fall.
    neverShrinksWhileNobodyAdmitted: {
      pairsChecked: still.nobodyAdmitted.pairs,
      shrank: still.nobodyAdmitted.shrank,
      maxShrinkSeconds: still.nobodyAdmitted.maxShrinkSeconds,
      examples: still.nobodyAdmitted.examples,
      ok: still.nobodyAdmitted.shrank === 0,
      rankDidNotFall: { ...still.rankDidNotFall, ok: still.rankDidNotFall.shrank === 0 },
    },
    admissionSteps: estimates.admissionSteps,
  };
}

/** Every k-th element, at most `n` of them (the charts stay small; deterministic). */
const thin = (xs, n) => (xs.length <= n ? xs : xs.filter((_, i) => i % Math.ceil(xs.length / n) === 0));

/** The charts: estimate vs actual (scatter), and the distribution of the absolute error. */
export function honestyCharts(estimates, honesty, subtitle) {
  const long = estimates.members.filter((m) => m[3] >= honesty.minWaitSeconds);
  const entry = thin(
    long.filter((m) => m[2] !== null).map((m) => [m[3], m[2]]),
    2500,
  );
  const half = thin(
    long.filter((m) => m[5] !== null && m[6] > 0).map((m) => [m[6], m[5]]),
    2500,
  );
  // Both axes up to twice the longest wait: the rare estimates above it are drawn on the top edge (counted in the legend).
  const top = 2 * Math.max(1, ...entry.map(([x]) => x), ...half.map(([x]) => x));
  const above = (points) => points.filter(([, y]) => y > top).length;
  const fmt = (e, points) => `median ${e.medianPct ?? '-'}%, p90 ${e.p90Pct ?? '-'}%${above(points) ? `; ${above(points)} shown above the top` : ''}`;
  return {
    'perf-sim-estimates.svg': scatterChart({
      title: `Estimated vs actual wait (members who waited >= ${honesty.minWaitSeconds} s)`,
      subtitle,
      xLabel: 'actual wait from that moment (s): to the admission',
      yLabel: 'estimatedWaitSeconds shown (s)',
      series: [
        { name: `at entry (${fmt(honesty.atEntry, entry)})`, points: entry, color: '#2563eb' },
        { name: `at half the wait (${fmt(honesty.atHalfWait, half)})`, points: half, color: '#ea580c' },
      ],
      max: top,
      slopes: [
        { slope: 1, label: 'estimate = actual', color: '#111827', dash: '' },
        { slope: 1.5, label: '+50%', color: '#6b7280' },
        { slope: 0.5, label: '-50%', color: '#6b7280' },
      ],
    }),
    'perf-sim-estimate-errors.svg': lineChart({
      title: 'Estimate honesty: share of members within an absolute error',
      subtitle,
      xLabel: 'absolute error (% of the actual wait); targets: median <= 20%, p90 <= 50%',
      yLabel: 'share of members',
      yMax: 1,
      series: [
        { name: 'at entry', points: honesty.atEntry.cdf, color: '#2563eb' },
        { name: 'at half the wait', points: honesty.atHalfWait.cdf, color: '#ea580c' },
      ],
      hLines: [
        { y: 0.5, label: 'median', color: '#6b7280' },
        { y: 0.9, label: 'p90', color: '#6b7280' },
      ],
    }),
  };
}
