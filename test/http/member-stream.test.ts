// The back-off of a member's stream while its looks fail (the store is down): src/http/member-stream.ts.
import { describe, expect, it } from 'vitest';
import { retryDelayMs } from '../../src/http/member-stream.js';

describe('a stream whose looks keep failing', () => {
  it('waits 1 s, then 2, 4, ... up to 30 s before the next look, each ±50%', () => {
    const middle = () => 0.5;
    expect([1, 2, 3, 4, 5, 6, 7, 20].map((n) => retryDelayMs(n, middle))).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
    expect(retryDelayMs(1, () => 0)).toBe(500);
    expect(retryDelayMs(6, () => 0.999_999)).toBeCloseTo(45_000, -1);
  });
});
