// The wait histogram and entry checkpoints behind stats().waitSeconds: the TypeScript
// half of what lua/includes/recordFigures.lua does (the contract suite makes both agree).

import { describe, expect, it } from 'vitest';
import { EntryCheckpoints, LAST_WAIT_BIN, recordWaits, waitBin, waitFigures, type WaitSlot } from '../src/queue-figures.js';

describe('wait bins', () => {
  it('are 19% wide from 10 ms, each wait in exactly one, increasing', () => {
    expect(waitBin(0)).toBe(0);
    expect(waitBin(9)).toBe(0);
    expect(waitBin(10)).toBe(1);
    expect(waitBin(11)).toBe(2); // bin 2 starts at floor(10 * 2^(1/4)) = floor(11.89) = 11
    expect(waitBin(13)).toBe(2);
    expect(waitBin(14)).toBe(3); // floor(10 * 2^(2/4)) = 14
    expect(waitBin(20)).toBe(5); // 10 * 2^(4/4)
    expect(waitBin(19)).toBe(4);
    let last = 0;
    for (let ms = 0; ms < 200_000; ms += 7) {
      const bin = waitBin(ms);
      expect(bin).toBeGreaterThanOrEqual(last);
      last = bin;
    }
    expect(waitBin(1e12)).toBe(LAST_WAIT_BIN);
  });
});

describe('waitFigures', () => {
  const now = 30_000_000 * 60_000 + 5_000;
  it('reads p50 and p90 by nearest rank within 9%, and the exact max', () => {
    const slots: Array<WaitSlot | undefined> = [];
    const waits = Array.from({ length: 100 }, (_, i) => (i + 1) * 1000); // 1 s .. 100 s
    recordWaits(slots, now, waits);
    const figures = waitFigures(slots, now);
    expect(figures.count).toBe(100);
    expect(figures.max).toBe(100);
    expect(Math.abs(figures.p50 - 50) / 50).toBeLessThanOrEqual(0.09);
    expect(Math.abs(figures.p90 - 90) / 90).toBeLessThanOrEqual(0.09);
  });

  it('covers the last 10 minutes by whole minutes, and reads 0 with nothing in them', () => {
    const slots: Array<WaitSlot | undefined> = [];
    recordWaits(slots, now - 10 * 60_000, [500_000]); // its slot is reused ten minutes on
    recordWaits(slots, now - 9 * 60_000, [2_000]);
    recordWaits(slots, now, [1_000]);
    expect(waitFigures(slots, now)).toMatchObject({ count: 2, max: 2 });
    expect(waitFigures(slots, now + 10 * 60_000)).toEqual({ p50: 0, p90: 0, max: 0, count: 0 });
  });
});

describe('EntryCheckpoints', () => {
  it('dates an entry by the last checkpoint at or below its score, at most one a second', () => {
    const points = new EntryCheckpoints();
    points.note(1, 1_000);
    points.note(2, 1_500); // within the second: no checkpoint
    points.note(3, 2_000);
    expect(points.size).toBe(2);
    expect(points.entryTime(0)).toBeNull();
    expect(points.entryTime(2)).toBe(1_000);
    expect(points.entryTime(3)).toBe(2_000);
    expect(points.entryTime(99)).toBe(2_000);
  });

  it('forgets what no waiting member needs, keeping the last when nobody waits', () => {
    const points = new EntryCheckpoints();
    for (let i = 1; i <= 5; i++) points.note(i * 10, i * 1000);
    points.trim(35); // the head scores 35: its checkpoint is 30's
    expect(points.size).toBe(3);
    expect(points.entryTime(35)).toBe(3_000);
    points.trim(null);
    expect(points.size).toBe(1);
    expect(points.entryTime(60)).toBe(5_000);
  });
});
