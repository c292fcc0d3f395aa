// RedisClock: Redis's time per queue, as a lower bound that is re-learned.

import { describe, expect, it } from 'vitest';
import { CLOCK_SAMPLE_TTL_MS, RedisClock } from '../../src/store/redis-clock.js';

describe('RedisClock', () => {
  const REDIS_T = 1_700_000_000_000;

  it('knows nothing until a reply taught it, then translates an instant as a lower bound', () => {
    let now = 1000;
    const clock = new RedisClock(() => now);
    expect(clock.toRedisTime('q', now)).toBeUndefined();
    clock.observe('q', REDIS_T, now); // Redis said REDIS_T; we read it at 1000
    expect(clock.toRedisTime('q', 1500)).toBeLessThanOrEqual(REDIS_T + 500);
    expect(clock.toRedisTime('q', 1500)).toBeGreaterThan(REDIS_T + 500 - 20);
    now = 2000;
    clock.observe('q', REDIS_T + 1000 - 5, 2000); // a tighter reading is not taken when it is lower...
    expect(clock.toRedisTime('q', 2000)).toBeGreaterThan(REDIS_T + 1000 - 20); // ...the best bound stays
  });

  it('keeps one bound per queue (queues live on different nodes)', () => {
    const clock = new RedisClock(() => 0);
    clock.observe('ahead', REDIS_T + 60_000, 0);
    clock.observe('here', REDIS_T, 0);
    expect(clock.toRedisTime('here', 0)).toBeLessThanOrEqual(REDIS_T);
    expect(clock.toRedisTime('ahead', 0)).toBeGreaterThan(REDIS_T + 59_000);
  });

  it('follows a clock that stepped back (or a failover to a node behind) within the sample TTL', () => {
    let now = 0;
    const clock = new RedisClock(() => now);
    clock.observe('q', REDIS_T + 60_000, 0); // the old master, 60 s ahead
    for (now = 100; now <= CLOCK_SAMPLE_TTL_MS + 100; now += 100) clock.observe('q', REDIS_T + now, now); // the new one
    expect(clock.toRedisTime('q', now)).toBeLessThanOrEqual(REDIS_T + now);
  });

  it('forgets every bound on reset (a reconnection)', () => {
    const clock = new RedisClock(() => 0);
    clock.observe('q', REDIS_T, 0);
    clock.reset();
    expect(clock.toRedisTime('q', 0)).toBeUndefined();
  });
});
