// `node bench/simulate.mjs --short` (issue 23): the flash-crowd simulation on 500 shoppers,
// run in CI so it cannot break unseen. It asserts that the run finishes with a result and
// sane fields (not speed, not the estimate targets: those are measured by the full run).
// Needs dist/ (npm run build) and redis-server, like test/cli.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runBenchScript } from '../support/bench-script.js';

const SIMULATE = fileURLToPath(new URL('../../bench/simulate.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'waitgate-sim-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Errors {
  estimated: number;
  medianPct: number | null;
  p90Pct: number | null;
}

describe('npm run simulate -- --short', () => {
  it('finishes with a result: everyone accounted for, FIFO, the rate change applied, estimate honesty measured', { timeout: 120_000 }, async () => {
    const out = join(dir, 'short.json');
    const { code, output } = await runBenchScript(SIMULATE, ['--short'], { SIM_OUT: out });
    expect(code, output).toBe(0);
    const result = JSON.parse(readFileSync(out, 'utf8')) as {
      short: boolean;
      config: { shoppers: number; maxActive: number; rateChange: { admitRatePerSecond: number } };
      summary: {
        outcome: { ordered: number; stillWaitingAtEnd: number };
        membersLost: number;
        fifoViolations: number;
        duplicateTokenOrders: number;
        maxOrderTransactionsInFlight: number;
        admissionsOverBucketBound: number;
        rateChanges: { atSeconds: number; admitRatePerSecond?: number; error?: string }[];
        estimateHonesty: {
          waitedAtLeastMin: number;
          atEntry: Errors;
          atHalfWait: Errors;
          neverShrinksWhileNobodyAdmitted: { pairsChecked: number; shrank: number };
        };
      };
      series: unknown[];
    };
    const { config, summary } = result;
    expect(result.short).toBe(true);
    expect(summary.outcome.ordered).toBeGreaterThan(config.shoppers / 2);
    expect(summary.outcome.stillWaitingAtEnd).toBe(0);
    expect(summary.membersLost).toBe(0);
    expect(summary.fifoViolations).toBe(0);
    expect(summary.duplicateTokenOrders).toBe(0);
    expect(summary.maxOrderTransactionsInFlight).toBeLessThanOrEqual(config.maxActive);
    expect(summary.admissionsOverBucketBound).toBe(0);
    expect(result.series.length).toBeGreaterThan(5);
    expect(summary.rateChanges).toHaveLength(1);
    expect(summary.rateChanges[0]!.error).toBeUndefined();
    expect(summary.rateChanges[0]!.admitRatePerSecond).toBe(config.rateChange.admitRatePerSecond);
    const h = summary.estimateHonesty;
    expect(h.waitedAtLeastMin).toBeGreaterThan(50);
    for (const e of [h.atEntry, h.atHalfWait]) {
      expect(e.estimated).toBeGreaterThan(50);
      expect(e.medianPct).toBeGreaterThanOrEqual(0);
      expect(e.p90Pct).toBeGreaterThanOrEqual(e.medianPct!);
    }
    expect(h.neverShrinksWhileNobodyAdmitted.shrank).toBeLessThanOrEqual(h.neverShrinksWhileNobodyAdmitted.pairsChecked);
    expect(output).toContain('estimate honesty at half the wait');
  });
});

interface Surge {
  safetyNet: boolean;
  members: number;
  instant: number;
  fifoViolations: number;
  waitP50Seconds: number;
  admittedPerSecond: number;
}

describe('npm run simulate -- --always-on --short', () => {
  it('finishes with a result: nothing oversold, closed by the stock, FIFO kept with and without the safety net', { timeout: 120_000 }, async () => {
    const out = join(dir, 'always-on.json');
    const { code, output } = await runBenchScript(SIMULATE, ['--short', '--always-on'], { SIM_OUT: out });
    expect(code, output).toBe(0);
    const result = JSON.parse(readFileSync(out, 'utf8')) as {
      short: boolean;
      quiet: { members: number; instant: number; p99Ms: number };
      stock: { units: number; consumed: number; oversold: number; closedBy: string | null; admittedAfterClose: number | null; mode: string };
      surges: Surge[];
    };
    expect(result.short).toBe(true);
    // Quiet load: below the rate, the net lets every member in from enter itself.
    expect(result.quiet.members).toBeGreaterThan(20);
    expect(result.quiet.instant).toBe(result.quiet.members);
    expect(result.stock).toMatchObject({ consumed: result.stock.units, oversold: 0, closedBy: 'waitgate:stock', admittedAfterClose: 0, mode: 'closed' });
    expect(result.surges.map((r) => r.safetyNet)).toEqual([true, false, false, true]);
    for (const r of result.surges) {
      expect(r.fifoViolations).toBe(0);
      // With the net, at most the bucket's burst (20, and what refills meanwhile) is let in at once; without it, nobody.
      if (r.safetyNet) expect(r.instant).toBeGreaterThan(0);
      else expect(r.instant).toBe(0);
      expect(r.instant).toBeLessThan(r.members / 4);
      expect(r.admittedPerSecond).toBeGreaterThan(0);
    }
  });
});
