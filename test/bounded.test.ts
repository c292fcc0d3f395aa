import { describe, expect, it } from 'vitest';
import { dropOldest } from '../src/bounded.js';

describe('dropOldest', () => {
  it('keeps the newest entries, at most the limit', () => {
    const seen = new Set([1, 2, 3, 4, 5]);
    dropOldest(seen, 3);
    expect([...seen]).toEqual([3, 4, 5]);
    dropOldest(seen, 3);
    expect([...seen]).toEqual([3, 4, 5]);
  });

  it('with slack, forgets the oldest down to the limit less the slack, and nothing while within the limit', () => {
    const cache = new Map(Array.from({ length: 10 }, (_, i) => [i, String(i)]));
    dropOldest(cache, 10, 4);
    expect(cache.size).toBe(10);
    cache.set(10, '10');
    dropOldest(cache, 10, 4);
    expect([...cache.keys()]).toEqual([5, 6, 7, 8, 9, 10]);
  });
});
