// The waiting page's backoff before it opens its event stream again (src/room/page/reconnect.ts).

import { describe, expect, it } from 'vitest';
import { MAX_RECONNECT_MS, reconnectDelayMs } from '../../src/room/page/reconnect.js';

describe('reconnectDelayMs', () => {
  it('doubles from 1 s up to a minute, spread ±50% so a crowd cut at once comes back spread out', () => {
    expect([0, 1, 2, 3].map((failures) => reconnectDelayMs(failures, () => 0.5))).toEqual([1000, 2000, 4000, 8000]);
    expect(reconnectDelayMs(0, () => 0)).toBe(500);
    expect(reconnectDelayMs(0, () => 0.999)).toBe(1499);
    expect(reconnectDelayMs(6, () => 0.5)).toBe(MAX_RECONNECT_MS);
    expect(reconnectDelayMs(1000, () => 0.999)).toBeLessThan(MAX_RECONNECT_MS * 1.5);
  });
});
