// Position building: polling tiers, and the wait estimate from the rate in force and the pace of the line.

import { describe, expect, it } from 'vitest';
import { ADMISSION_WINDOW_MS, EMPTY_WINDOW, observedRate, recordAdmissionStep, rollWindow } from '../src/admission-window.js';
import type { AdmissionWindow } from '../src/store/store.js';
import { DEFAULT_POLLING_INTERVALS } from '../src/index.js';
import { STALL_GRACE_MS, buildPosition, effectiveAdmissionRate, pollingIntervalFor } from '../src/position.js';
import type { ControlsView, MemberSnapshot } from '../src/store/store.js';
import { nextPace, type Pace } from '../src/rates.js';

const T0 = 1_700_000_000_000;
const RATE_50 = { admitRatePerSecond: 50 };
const ADAPTIVE = { mode: 'adaptive', targetLatencyMs: 200, minRatePerSecond: 10, maxRatePerSecond: 400 } as const;
const OPEN: ControlsView = { mode: 'open', message: null, opensAt: null, shuffle: false, preQueueFrom: null, admitRatePerSecond: null };

/** `count` admissions at `now` that left members waiting. */
const recordAdmissions = (window: AdmissionWindow, count: number, now: number) => recordAdmissionStep(window, count, count + 1000, now);

function waitingAt(rank: number, window = EMPTY_WINDOW, now = T0): MemberSnapshot {
  return { status: 'WAITING', rank, totalWaiting: rank + 1, entryToken: null, entryTokenExpiresAt: null, window, now };
}

describe('polling tiers', () => {
  it('follows the default tiers by rank', () => {
    expect([0, 50, 99, 100, 500, 999, 1000, 5000].map((r) => pollingIntervalFor(r, DEFAULT_POLLING_INTERVALS))).toEqual([1, 1, 1, 3, 3, 3, 5, 5]);
  });

  it('uses the first tier when there is no rank', () => {
    expect(pollingIntervalFor(null, [{ belowRank: 10, seconds: 2 }, { seconds: 9 }])).toBe(2);
  });
});

describe('wait estimate', () => {
  it('uses the configured rate when nothing was admitted yet (rank 500 -> 10 s, 3 s interval)', () => {
    expect(buildPosition(waitingAt(500), RATE_50, DEFAULT_POLLING_INTERVALS)).toMatchObject({ estimatedWaitSeconds: 10, pollingIntervalSeconds: 3 });
    expect(buildPosition(waitingAt(50), RATE_50, DEFAULT_POLLING_INTERVALS)).toMatchObject({ estimatedWaitSeconds: 1, pollingIntervalSeconds: 1 });
    expect(buildPosition(waitingAt(5000), RATE_50, DEFAULT_POLLING_INTERVALS)).toMatchObject({ estimatedWaitSeconds: 100, pollingIntervalSeconds: 5 });
    // The head waits for the next admission step: at least 1 s, never 0.
    expect(buildPosition(waitingAt(0), RATE_50, DEFAULT_POLLING_INTERVALS).estimatedWaitSeconds).toBe(1);
  });

  it('plans with the rate in force times the pace of the line (maxActive held it back to a tenth)', () => {
    let pace = null as Pace | null;
    for (let s = 0; s < 10; s++) pace = nextPace(pace, T0 + s * 1000, 5, 50); // 5 moved of 50 offered a step
    const window = { ...recordAdmissions(EMPTY_WINDOW, 5, T0), pace: pace!.factor, movedAt: T0 + 9000 };
    expect(pace!.factor).toBeCloseTo(0.1, 6);
    expect(buildPosition(waitingAt(100, window, T0 + 9000), RATE_50, DEFAULT_POLLING_INTERVALS).estimatedWaitSeconds).toBe(20);
  });

  it('plans a faster line when abandoned members ahead are dropped (pace above 1)', () => {
    const pace = nextPace(null, T0, 100, 50); // 50 admitted and 50 dropped for 50 tokens
    expect(effectiveAdmissionRate({ ...EMPTY_WINDOW, pace: pace.factor, movedAt: T0 }, T0, 50)).toBe(100);
  });

  it('follows a rate change at once: the rate in force, not the rate observed before it', () => {
    const window = { ...recordAdmissions(EMPTY_WINDOW, 50, T0), pace: 1, movedAt: T0 };
    expect(buildPosition(waitingAt(400, window, T0 + 500), RATE_50, DEFAULT_POLLING_INTERVALS).estimatedWaitSeconds).toBe(8);
    const pinned = { ...waitingAt(400, window, T0 + 500), controls: { ...OPEN, admitRatePerSecond: 200 } };
    expect(buildPosition(pinned, RATE_50, DEFAULT_POLLING_INTERVALS).estimatedWaitSeconds).toBe(2);
    const adaptive = { ...waitingAt(400, window, T0 + 500), controls: { ...OPEN, adaptiveRate: 100 } };
    expect(buildPosition(adaptive, { admitRatePerSecond: 50, admission: ADAPTIVE }, DEFAULT_POLLING_INTERVALS).estimatedWaitSeconds).toBe(4);
  });

  it('a step that drained the line does not slow the estimate (rank 7 on a line admitting 10 a second: 1 s)', () => {
    let window = EMPTY_WINDOW;
    for (let s = 0; s < 10; s++) window = recordAdmissionStep(window, 3, 3, T0 + s * 1000); // everyone admitted each step
    expect(buildPosition(waitingAt(7, window, T0 + 9500), { admitRatePerSecond: 10 }, DEFAULT_POLLING_INTERVALS).estimatedWaitSeconds).toBe(1);
  });

  it('slows the planned pace in proportion to a stall longer than the grace, and never speeds it up while nothing moves', () => {
    const window = { ...recordAdmissions(EMPTY_WINDOW, 5, T0), pace: 0.5 };
    const rate = effectiveAdmissionRate(window, T0 + STALL_GRACE_MS, 50);
    expect(rate).toBe(25);
    expect(effectiveAdmissionRate(window, T0 + STALL_GRACE_MS / 2, 50)).toBe(rate);
    expect(effectiveAdmissionRate(window, T0 + 2 * STALL_GRACE_MS, 50)).toBeCloseTo(rate / 2, 9);
    expect(effectiveAdmissionRate(window, T0 + 4 * STALL_GRACE_MS, 50)).toBeCloseTo(rate / 4, 9);
  });

  it('uses the rate in force before anything was admitted, and for a custom store without a pace', () => {
    expect(effectiveAdmissionRate(EMPTY_WINDOW, T0, 50)).toBe(50);
    const { last: _last, movedAt: _movedAt, pace: _pace, ...legacy } = recordAdmissions(EMPTY_WINDOW, 5, T0);
    expect(effectiveAdmissionRate(legacy, T0 + 2 * ADMISSION_WINDOW_MS, 50)).toBe(50);
  });
});

describe('admission window', () => {
  it('rolls the current window into the previous one, and forgets both after two lengths', () => {
    const w = recordAdmissions(EMPTY_WINDOW, 7, T0);
    expect(rollWindow(w, T0 + ADMISSION_WINDOW_MS)).toMatchObject({ start: T0 + ADMISSION_WINDOW_MS, current: 0, previous: 7 });
    expect(rollWindow(w, T0 + 2 * ADMISSION_WINDOW_MS)).toMatchObject({ current: 0, previous: 0 });
  });

  it('weights the previous window by how much of it still overlaps', () => {
    const w = recordAdmissions(EMPTY_WINDOW, 100, T0);
    // Half of the previous window overlaps the last 10 s.
    expect(observedRate(w, T0 + 15_000)).toBeCloseTo(5, 5);
  });
});

describe('admission step', () => {
  it('records every admission, also a step that admitted everyone waiting, and dates it', () => {
    expect(recordAdmissionStep(EMPTY_WINDOW, 5, 5, T0)).toMatchObject({ current: 5, last: T0, movedAt: T0 });
    expect(recordAdmissionStep(EMPTY_WINDOW, 5, 6, T0)).toMatchObject({ current: 5, last: T0, movedAt: T0 });
  });

  it('marks the line as moved when nobody waits, not when members wait and nobody is admitted', () => {
    expect(recordAdmissionStep(EMPTY_WINDOW, 0, 0, T0).movedAt).toBe(T0);
    expect(recordAdmissionStep(EMPTY_WINDOW, 0, 3, T0).movedAt).toBeNull();
  });
});
