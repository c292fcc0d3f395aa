// WaitingQueue options: defaults, and a WaitgateConfigError naming each bad or unknown option.

import { describe, expect, it } from 'vitest';
import { DEFAULT_POLLING_INTERVALS, MemoryStore, WaitgateConfigError, WaitingQueue, isWaitgateError, type WaitingQueueOptions } from '../src/index.js';

const store = new MemoryStore();

/** A store implementing only the required methods (no queueSnapshot). */
function bareStore() {
  const m = new MemoryStore();
  return {
    enter: m.enter.bind(m),
    position: m.position.bind(m),
    admit: m.admit.bind(m),
    claim: m.claim.bind(m),
    consume: m.consume.bind(m),
    release: m.release.bind(m),
    leave: m.leave.bind(m),
    stats: m.stats.bind(m),
  };
}

function configError(options: unknown): WaitgateConfigError {
  try {
    new WaitingQueue(options as never);
  } catch (error) {
    expect(error).toBeInstanceOf(WaitgateConfigError);
    expect(isWaitgateError(error)).toBe(true);
    return error as WaitgateConfigError;
  }
  throw new Error('expected a WaitgateConfigError');
}

describe('WaitingQueue options', () => {
  it('applies the documented defaults', () => {
    const queue = new WaitingQueue({ store });
    expect(queue.name).toBe('default');
    expect(queue.config).toEqual({
      name: 'default',
      admitRatePerSecond: 50,
      admitBurst: 50,
      burstFollowsRate: true,
      maxActive: null,
      entryTokenTtlMs: 300_000,
      claimTtlMs: 30_000,
      pollingIntervals: DEFAULT_POLLING_INTERVALS,
      operationTimeoutMs: 1000,
      positionCache: null,
      abandonAfterMs: 300_000,
      holdSilentAfterMs: null,
      pickupTimeoutMs: null,
      admission: { mode: 'fixed' },
      limits: {},
      safetyNet: false,
      maxPlacesPerIdentity: 1,
      lanes: [],
    });
  });

  it('takes lanes whose shares add up to at most 1, and names the field of bad ones', () => {
    const lanes = [
      { name: 'vip', share: 0.3 },
      { name: 'press', share: 0.1 },
    ];
    expect(new WaitingQueue({ store, lanes }).config.lanes).toEqual(lanes);
    expect(configError({ store, lanes: [...lanes, { name: 'all', share: 0.7 }] }).option).toBe('lanes');
    expect(configError({ store, lanes: [{ name: 'default', share: 0.1 }] }).option).toBe('lanes.0.name');
    expect(configError({ store, lanes: [{ name: 'vip', share: 0 }] }).option).toBe('lanes.0.share');
    expect(configError({ store, lanes: [lanes[0], lanes[0]] }).option).toBe('lanes');
  });

  it('takes adaptive admission, and names the field of a bad one', () => {
    const admission = { mode: 'adaptive', targetLatencyMs: 250, minRatePerSecond: 5, maxRatePerSecond: 100 } as const;
    expect(new WaitingQueue({ store, admission }).config.admission).toEqual(admission);
    expect(configError({ store, admission: { ...admission, targetLatencyMs: 0 } }).option).toBe('admission.targetLatencyMs');
    expect(configError({ store, admission: { ...admission, minRatePerSecond: 200 } }).option).toBe('admission.minRatePerSecond');
    expect(configError({ store, admission: { mode: 'gradient' } }).option).toBe('admission.mode');
    expect(configError({ store, admission: { ...admission, maxRatePerSecond: -1 } }).option).toBe('admission.maxRatePerSecond');
    expect(configError({ store, admission: { ...admission, extra: 1 } }).option).toBe('extra');
    expect(configError({ store, admission: { mode: 'adaptive' } }).option).toBe('admission.targetLatencyMs');
  });

  it('resolves positionCache: true to its documented defaults, exactBelowRank the largest tier belowRank', () => {
    // 1.25 × (burst 50 + 50/s × 0.25 s) = 78.125 → 79, below the default tiers' largest belowRank, 1000.
    expect(new WaitingQueue({ store, positionCache: true }).config.positionCache).toEqual({ refreshMs: 250, maxMembers: 100_000, exactBelowRank: 1000 });
    expect(new WaitingQueue({ store, positionCache: {} }).config.positionCache).toEqual({ refreshMs: 250, maxMembers: 100_000, exactBelowRank: 1000 });
    expect(new WaitingQueue({ store, positionCache: false }).config.positionCache).toBeNull();
  });

  it('defaults exactBelowRank to what can be admitted between two snapshot refreshes, plus 25%, when that is larger', () => {
    const exactBelowRank = (options: Partial<WaitingQueueOptions>) =>
      new WaitingQueue({ store, positionCache: true, ...options }).config.positionCache!.exactBelowRank;
    // 1.25 × (1000 + 1000/s × 0.25 s) = 1562.5 → 1563 > 1000.
    expect(exactBelowRank({ admitRatePerSecond: 1000 })).toBe(1563);
    // 1.25 × (300 + 300/s × 0.25 s) = 468.75 → 469 < 1000.
    expect(exactBelowRank({ admitRatePerSecond: 300 })).toBe(1000);
    // 1.25 × (20 + 1000/s × 0.05 s) = 87.5 → 88 < 1000.
    expect(exactBelowRank({ admitRatePerSecond: 1000, admitBurst: 20, positionCache: { refreshMs: 50 } })).toBe(1000);
    // refreshMs counts: 1.25 × (50 + 50/s × 60 s) = 3812.5 → 3813.
    expect(exactBelowRank({ positionCache: { refreshMs: 60_000 } })).toBe(3813);
    // The largest belowRank of the tiers (the last finite one), whatever the tiers.
    expect(exactBelowRank({ admitRatePerSecond: 1, pollingIntervals: [{ belowRank: 30, seconds: 1 }, { seconds: 5 }] })).toBe(30);
    expect(exactBelowRank({ admitRatePerSecond: 1, pollingIntervals: [{ belowRank: 30, seconds: 1 }, { belowRank: 250, seconds: 2 }, { seconds: 5 }] })).toBe(
      250,
    );
    // 1.25 × (300 + 75) = 468.75 → 469 > 250.
    expect(exactBelowRank({ admitRatePerSecond: 300, pollingIntervals: [{ belowRank: 30, seconds: 1 }, { belowRank: 250, seconds: 2 }, { seconds: 5 }] })).toBe(
      469,
    );
    // A single tier has no belowRank: the admission term alone, 1.25 × (50 + 12.5) → 79.
    expect(exactBelowRank({ pollingIntervals: [{ seconds: 5 }] })).toBe(79);
    // Exactly 12 (1.25 × (3 + 1.1 × 6) = 12), not 13 from float noise (12.000000000000002).
    expect(exactBelowRank({ admitRatePerSecond: 1.1, admitBurst: 3, pollingIntervals: [{ seconds: 5 }], positionCache: { refreshMs: 6000 } })).toBe(12);
  });

  it('takes an explicit exactBelowRank as given, 0 included', () => {
    const cache = (positionCache: WaitingQueueOptions['positionCache']) =>
      new WaitingQueue({ store, positionCache, admitRatePerSecond: 300 }).config.positionCache;
    expect(cache({ exactBelowRank: 0 })).toEqual({ refreshMs: 250, maxMembers: 100_000, exactBelowRank: 0 });
    expect(cache({ exactBelowRank: 5, refreshMs: 1000, maxMembers: 10 })).toEqual({ refreshMs: 1000, maxMembers: 10, exactBelowRank: 5 });
    expect(cache({ exactBelowRank: 100_000_000 })!.exactBelowRank).toBe(100_000_000);
  });

  it('defaults the burst to the rate, at least 1', () => {
    expect(new WaitingQueue({ store, admitRatePerSecond: 7.5 }).config.admitBurst).toBe(7);
    expect(new WaitingQueue({ store, admitRatePerSecond: 0.2 }).config.admitBurst).toBe(1);
    expect(new WaitingQueue({ store, admitRatePerSecond: 50, admitBurst: 5 }).config.admitBurst).toBe(5);
  });

  it.each([
    [{ store, admitRatePerSecnd: 5 }, 'admitRatePerSecnd'],
    [{ store, name: '' }, 'name'],
    [{ store, name: 'has space' }, 'name'],
    [{ store, name: 'x'.repeat(65) }, 'name'],
    [{ store, name: '{tag}' }, 'name'],
    [{ store, admitRatePerSecond: 0 }, 'admitRatePerSecond'],
    [{ store, admitRatePerSecond: -1 }, 'admitRatePerSecond'],
    [{ store, admitRatePerSecond: Number.POSITIVE_INFINITY }, 'admitRatePerSecond'],
    [{ store, admitRatePerSecond: '50' }, 'admitRatePerSecond'],
    [{ store, admitBurst: 0 }, 'admitBurst'],
    [{ store, admitBurst: 2.5 }, 'admitBurst'],
    [{ store, admitBurst: 10_001 }, 'admitBurst'],
    [{ store, maxActive: 0 }, 'maxActive'],
    [{ store, entryTokenTtlSeconds: 0 }, 'entryTokenTtlSeconds'],
    [{ store, claimTtlSeconds: Number.NaN }, 'claimTtlSeconds'],
    [{ store, operationTimeoutMs: 0 }, 'operationTimeoutMs'],
    [{ store, pollingIntervals: [] }, 'pollingIntervals'],
    [{ store, pollingIntervals: [{ belowRank: 10, seconds: 1 }] }, 'pollingIntervals.0.belowRank'],
    [{ store, pollingIntervals: [{ seconds: 1 }, { seconds: 2 }] }, 'pollingIntervals.0.belowRank'],
    [{ store, pollingIntervals: [{ belowRank: 10, seconds: 1 }, { belowRank: 5, seconds: 2 }, { seconds: 3 }] }, 'pollingIntervals.1.belowRank'],
    [{ store, pollingIntervals: [{ belowRank: 10, seconds: 0 }, { seconds: 3 }] }, 'pollingIntervals.0.seconds'],
    [{ store, pollingIntervals: [{ seconds: 3, every: 1 }] }, 'every'],
    [{}, 'store'],
    [{ store: {} }, 'store'],
    [{ store: { enter() {} } }, 'store'],
    [{ store, positionCache: { refreshMs: 1 } }, 'positionCache.refreshMs'],
    [{ store, positionCache: { ttl: 5 } }, 'ttl'],
    [{ store, positionCache: { exactBelowRank: -1 } }, 'positionCache.exactBelowRank'],
    [{ store, positionCache: { exactBelowRank: 2.5 } }, 'positionCache.exactBelowRank'],
    [{ store, positionCache: { exactBelowRank: Number.NaN } }, 'positionCache.exactBelowRank'],
    [{ store, positionCache: { exactBelowRank: Number.POSITIVE_INFINITY } }, 'positionCache.exactBelowRank'],
    [{ store, positionCache: { exactBelowRank: 100_000_001 } }, 'positionCache.exactBelowRank'],
    [{ store, positionCache: { exactBelowRank: '100' } }, 'positionCache.exactBelowRank'],
    [{ store, positionCache: { exactBelowRank: null } }, 'positionCache.exactBelowRank'],
    [{ store, positionCache: { exactBelowRnk: 100 } }, 'exactBelowRnk'],
    [{ store: { ...bareStore() }, positionCache: true }, 'positionCache'],
  ])('rejects %o naming %s', (options, option) => {
    const error = configError(options);
    expect(error.option).toBe(option);
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain(option);
  });

  it('takes holdSilentAfterSeconds between its floor and abandonAfterSeconds, and names it otherwise', () => {
    // Default tiers, rate 50, burst 50: a member at rank 100 (told 3 s) can reach the head
    // before its next poll (50 + 50 × 3.6 = 230 ≥ 100); one at rank 1000 (told 5 s) cannot
    // (50 + 50 × 6 = 350 < 1000): the floor is 3 × 1.2 + 1 + 0.5 = 5.1 s.
    expect(new WaitingQueue({ store, holdSilentAfterSeconds: 5.1 }).config.holdSilentAfterMs).toBe(5100);
    expect(new WaitingQueue({ store, holdSilentAfterSeconds: null }).config.holdSilentAfterMs).toBeNull();
    const tooShort = configError({ store, holdSilentAfterSeconds: 5 });
    expect(tooShort.option).toBe('holdSilentAfterSeconds');
    expect(tooShort.message).toContain('at least 5.1 s');
    // The simulation's tiers: 1 s below 100, 2 s below 500, 4 s beyond; rate 50: the 2 s tier reaches the head.
    const simulation = { store, pollingIntervals: [{ belowRank: 100, seconds: 1 }, { belowRank: 500, seconds: 2 }, { seconds: 4 }], abandonAfterSeconds: 15 };
    expect(new WaitingQueue({ ...simulation, holdSilentAfterSeconds: 3.9 }).config.holdSilentAfterMs).toBe(3900);
    expect(configError({ ...simulation, holdSilentAfterSeconds: 3.8 }).message).toContain('at least 3.9 s');
    // A faster rate brings the 4 s tier within reach of the head (50 + 100 × 4.8 = 530 ≥ 500): 4 × 1.2 + 1.5.
    expect(configError({ ...simulation, admitRatePerSecond: 100, admitBurst: 50, holdSilentAfterSeconds: 6.2 }).message).toContain('at least 6.3 s');
    // Adaptive admission: its maximum rate counts.
    const adaptive = { mode: 'adaptive', targetLatencyMs: 200, minRatePerSecond: 10, maxRatePerSecond: 100 } as const;
    expect(configError({ ...simulation, admitBurst: 50, admission: adaptive, holdSilentAfterSeconds: 6.2 }).option).toBe('holdSilentAfterSeconds');
    // One tier: its interval.
    const oneTier = { store, pollingIntervals: [{ seconds: 1 }], abandonAfterSeconds: 5 };
    expect(new WaitingQueue({ ...oneTier, holdSilentAfterSeconds: 2.7 }).config.holdSilentAfterMs).toBe(2700);
    expect(configError({ ...oneTier, holdSilentAfterSeconds: 2.6 }).message).toContain('at least 2.7 s');
    // Needs abandonment, below it.
    expect(configError({ ...simulation, abandonAfterSeconds: null, holdSilentAfterSeconds: 4 }).message).toContain('needs abandonAfterSeconds');
    expect(configError({ ...simulation, holdSilentAfterSeconds: 15 }).message).toContain('below abandonAfterSeconds');
    expect(configError({ ...simulation, holdSilentAfterSeconds: 20 }).option).toBe('holdSilentAfterSeconds');
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '4']) {
      expect(configError({ ...simulation, holdSilentAfterSeconds: bad }).option).toBe('holdSilentAfterSeconds');
    }
    expect(configError({ ...simulation, holdSilentAfterSecs: 4 }).option).toBe('holdSilentAfterSecs');
  });

  it('rejects a missing or non-object options argument', () => {
    expect(configError(undefined).option).toBe('store');
    expect(configError(null).option).toBe('store');
    expect(configError('orders').option).toBe('options');
  });

  it('rejects a bad admitter interval', () => {
    const queue = new WaitingQueue({ store });
    expect(() => queue.startAdmitter({ intervalMs: 0 })).toThrow(WaitgateConfigError);
  });
});
