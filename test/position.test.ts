// Position building: polling tiers, and the wait estimate from the observed admission rate.

import { describe, expect, it } from 'vitest';
import { ADMISSION_WINDOW_MS, EMPTY_WINDOW, observedRate, recordAdmissionStep, rollWindow } from '../src/admission-window.js';
import type { AdmissionWindow } from '../src/store/store.js';
import { DEFAULT_POLLING_INTERVALS } from '../src/index.js';
import { STALL_GRACE_MS, buildPosition, effectiveAdmissionRate, pollingIntervalFor } from '../src/position.js';
import type { MemberSnapshot } from '../src/store/store.js';

const T0 = 1_700_000_000_000;

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
    expect(buildPosition(waitingAt(500), 50, DEFAULT_POLLING_INTERVALS)).toMatchObject({ estimatedWaitSeconds: 10, pollingIntervalSeconds: 3 });
    expect(buildPosition(waitingAt(50), 50, DEFAULT_POLLING_INTERVALS)).toMatchObject({ estimatedWaitSeconds: 1, pollingIntervalSeconds: 1 });
    expect(buildPosition(waitingAt(5000), 50, DEFAULT_POLLING_INTERVALS)).toMatchObject({ estimatedWaitSeconds: 100, pollingIntervalSeconds: 5 });
    // The head waits for the next admission step: at least 1 s, never 0.
    expect(buildPosition(waitingAt(0), 50, DEFAULT_POLLING_INTERVALS).estimatedWaitSeconds).toBe(1);
  });

  it('uses the observed rate when admissions are slower than configured (e.g. held back by maxActive)', () => {
    let window = EMPTY_WINDOW;
    for (let s = 0; s < 10; s++) window = recordAdmissions(window, 5, T0 + s * 1000);
    const now = T0 + 10_000;
    expect(observedRate(window, now)).toBeCloseTo(5, 0);
    expect(buildPosition(waitingAt(100, window, now), 50, DEFAULT_POLLING_INTERVALS).estimatedWaitSeconds).toBe(20);
  });

  it('never plans with more than the configured rate, even after a burst', () => {
    const window = recordAdmissions(EMPTY_WINDOW, 500, T0);
    expect(observedRate(window, T0 + 100)).toBe(500);
    expect(effectiveAdmissionRate(window, T0 + 100, 50)).toBe(50);
  });

  it('keeps the pace read one grace after the last admission while the line keeps moving', () => {
    let window = EMPTY_WINDOW;
    for (let s = 0; s < 10; s++) window = recordAdmissions(window, 5, T0 + s * 1000);
    const frozenAt = T0 + 9000 + STALL_GRACE_MS;
    const frozen = effectiveAdmissionRate({ ...window, movedAt: frozenAt }, frozenAt, 50);
    expect(frozen).toBeGreaterThan(0);
    // Later, the window read at `now` is empty, but the line moved lately (movedAt): the pace holds.
    const now = frozenAt + 2 * ADMISSION_WINDOW_MS;
    expect(observedRate(window, now)).toBe(0);
    expect(effectiveAdmissionRate({ ...window, movedAt: now - 1000 }, now, 50)).toBe(frozen);
  });

  it('slows the planned pace in proportion to a stall longer than the grace', () => {
    const window = recordAdmissions(EMPTY_WINDOW, 5, T0);
    // One grace after the last admission the window's own decay stops; the stall rule scales from there.
    const rate = effectiveAdmissionRate(window, T0 + STALL_GRACE_MS, 50);
    expect(rate).toBeGreaterThan(0);
    expect(effectiveAdmissionRate(window, T0 + STALL_GRACE_MS / 2, 50)).toBeGreaterThanOrEqual(rate);
    expect(effectiveAdmissionRate(window, T0 + 2 * STALL_GRACE_MS, 50)).toBeCloseTo(rate / 2, 9);
    expect(effectiveAdmissionRate(window, T0 + 4 * STALL_GRACE_MS, 50)).toBeCloseTo(rate / 4, 9);
  });

  it('uses the configured rate before anything was admitted', () => {
    expect(effectiveAdmissionRate(EMPTY_WINDOW, T0, 50)).toBe(50);
  });

  it('reads a custom store window without last/movedAt as before', () => {
    const { last: _last, movedAt: _movedAt, ...legacy } = recordAdmissions(EMPTY_WINDOW, 5, T0);
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
  it('records only admissions that left members waiting, and dates them', () => {
    expect(recordAdmissionStep(EMPTY_WINDOW, 5, 5, T0)).toMatchObject({ current: 0, last: null, movedAt: T0 });
    expect(recordAdmissionStep(EMPTY_WINDOW, 5, 6, T0)).toMatchObject({ current: 5, last: T0, movedAt: T0 });
  });

  it('marks the line as moved when nobody waits, not when members wait and nobody is admitted', () => {
    expect(recordAdmissionStep(EMPTY_WINDOW, 0, 0, T0).movedAt).toBe(T0);
    expect(recordAdmissionStep(EMPTY_WINDOW, 0, 3, T0).movedAt).toBeNull();
  });
});
