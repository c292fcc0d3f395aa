// The waiting page's backoff before it opens its event stream again (src/room/page/reconnect.ts).

import { describe, expect, it } from 'vitest';
import { MAX_RECONNECT_MS, reconnectDelayMs, retryAfterRefusalMs } from '../../src/room/page/reconnect.js';

describe('reconnectDelayMs', () => {
  it('doubles from 1 s up to a minute, spread ±50% so a crowd cut at once comes back spread out', () => {
    expect([0, 1, 2, 3].map((failures) => reconnectDelayMs(failures, () => 0.5))).toEqual([1000, 2000, 4000, 8000]);
    expect(reconnectDelayMs(0, () => 0)).toBe(500);
    expect(reconnectDelayMs(0, () => 0.999)).toBe(1499);
    expect(reconnectDelayMs(6, () => 0.5)).toBe(MAX_RECONNECT_MS);
    expect(reconnectDelayMs(1000, () => 0.999)).toBeLessThan(MAX_RECONNECT_MS * 1.5);
  });
});

describe('retryAfterRefusalMs', () => {
  it('asks an overloaded or failing server again after its Retry-After, else after the fallback', () => {
    expect(retryAfterRefusalMs(503, '7', 5000)).toBe(7000);
    expect(retryAfterRefusalMs(429, ' 2 ', 5000)).toBe(2000);
    expect(retryAfterRefusalMs(503, null, 5000)).toBe(5000);
    expect(retryAfterRefusalMs(500, 'Wed, 21 Oct 2026 07:28:00 GMT', 5000)).toBe(5000); // a date: the fallback
    expect(retryAfterRefusalMs(503, '999999', 5000)).toBe(3_600_000); // at most an hour
  });

  it('stops on any other refusal: asking again would only be refused again', () => {
    for (const status of [400, 401, 403, 404, 409]) expect(retryAfterRefusalMs(status, '1', 5000), String(status)).toBeNull();
  });
});
