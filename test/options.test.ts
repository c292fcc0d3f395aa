// WaitingQueue options: defaults, and a WaitgateConfigError naming each bad or unknown option.

import { describe, expect, it } from 'vitest';
import { DEFAULT_POLLING_INTERVALS, MemoryStore, WaitgateConfigError, WaitingQueue, isWaitgateError } from '../src/index.js';

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
      maxActive: null,
      entryTokenTtlMs: 300_000,
      claimTtlMs: 30_000,
      pollingIntervals: DEFAULT_POLLING_INTERVALS,
      operationTimeoutMs: 1000,
      positionCache: null,
    });
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
    [{ store: { ...bareStore() }, positionCache: true }, 'positionCache'],
  ])('rejects %o naming %s', (options, option) => {
    const error = configError(options);
    expect(error.option).toBe(option);
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain(option);
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
