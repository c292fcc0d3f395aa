// waitgate/opentelemetry on MemoryStore's clock: a scripted sale, then every documented
// instrument read back through a real SDK MeterProvider; the no-SDK path; stop(); a failing stats().

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { metrics } from '@opentelemetry/api';
import { DataPointType } from '@opentelemetry/sdk-metrics';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore, WaitingQueue, WaitgateConfigError, type Store, type WaitingQueueOptions } from '../../src/index.js';
import { instrumentQueue } from '../../src/opentelemetry/index.js';
import { STORE_BUCKETS, WAIT_BUCKETS } from '../../src/opentelemetry/instruments.js';
import { VERSION } from '../../src/opentelemetry/version.js';
import { testMeter } from './collect.js';

const T0 = 1_700_000_000_000;
const NAME = 'metrics';
const Q = { 'waitgate.queue.name': NAME };

/** The documented instruments (docs/metrics.md): name -> [SDK data point type, unit]. */
const DOCUMENTED = {
  'waitgate.queue.waiting': ['GAUGE', '{member}'],
  'waitgate.queue.active': ['GAUGE', '{member}'],
  'waitgate.queue.claimed': ['GAUGE', '{member}'],
  'waitgate.queue.admission.rate': ['GAUGE', '{admission}/s'],
  'waitgate.queue.transitions': ['SUM', '{transition}'],
  'waitgate.member.transitions': ['SUM', '{transition}'],
  'waitgate.queue.wait.duration': ['HISTOGRAM', 's'],
  'waitgate.store.operation.duration': ['HISTOGRAM', 's'],
} as const;

/** A MemoryStore on a fake clock, behind a switch that makes its stats() fail. */
function setup(options: Partial<WaitingQueueOptions> = {}) {
  const clock = { now: T0 };
  const memory = new MemoryStore({ now: () => clock.now });
  const faults = { stats: false };
  const store = new Proxy(memory, {
    get(target, property) {
      if (property === 'stats' && faults.stats) return () => Promise.reject(new Error('connection lost'));
      const value: unknown = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as Store;
  const make = (extra: Partial<WaitingQueueOptions> = {}) =>
    new WaitingQueue({
      store,
      name: NAME,
      admitRatePerSecond: 50,
      admitBurst: 50,
      pollingIntervals: [{ seconds: 1 }],
      abandonAfterSeconds: 5,
      ...options,
      ...extra,
    });
  return { clock, faults, queue: make(), make };
}

const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `m${from + i}`);

/**
 * The sale: 100 enter at T0; m0–m4 close the tab, the others poll every second; 6 s
 * later one admit() drops the 5 silent ones and admits m5–m54 (each waited 6 s); m5–m24
 * order (claim + consume), m25 holds a claim, m26 claims and releases; m99 leaves.
 */
async function runSale(queue: WaitingQueue, clock: { now: number }) {
  for (const m of ids(0, 100)) await queue.enter(m);
  for (let second = 0; second < 6; second++) {
    clock.now += 1000;
    for (const m of ids(5, 100)) await queue.position(m);
  }
  const admitted = await queue.admit();
  const claimOf = async (m: string) => queue.claim(m, (await queue.token(m))!.entryToken);
  for (const m of ids(5, 25)) expect(await queue.consume(await claimOf(m))).toBe(true);
  await claimOf('m25');
  expect(await queue.release(await claimOf('m26'))).toBe(true);
  expect(await queue.leave('m99')).toBe(true);
  return admitted;
}

afterEach(() => {
  metrics.disable();
  vi.restoreAllMocks();
});

describe('instrumentQueue: a scripted sale, read back through the SDK', () => {
  it('reports every documented instrument, with its unit and kind, and the right values', async () => {
    const { queue, clock } = setup();
    const otel = testMeter();
    instrumentQueue(queue, { meter: otel.meter });
    const admitted = await runSale(queue, clock);
    expect(admitted.map((a) => a.memberId)).toEqual(ids(5, 55));

    const c = await otel.collect();
    for (const [name, [type, unit]] of Object.entries(DOCUMENTED)) {
      const metric = c.metric(name);
      expect(metric, name).toBeDefined();
      expect([DataPointType[metric!.dataPointType], metric!.descriptor.unit], name).toEqual([type, unit]);
      if (metric!.dataPointType === DataPointType.SUM) expect(metric!.isMonotonic, name).toBe(true);
    }
    expect(c.metrics.map((m) => m.descriptor.name).sort()).toEqual(Object.keys(DOCUMENTED).sort());

    // Gauges, from one stats(): 100 - 5 abandoned - 50 admitted - 1 left wait; 50 - 20 consumed
    // hold a token, one of them under a live claim; 50 admitted within the last second.
    expect(c.points('waitgate.queue.waiting')).toEqual([{ attributes: Q, value: 44 }]);
    expect(c.points('waitgate.queue.active')).toEqual([{ attributes: Q, value: 30 }]);
    expect(c.points('waitgate.queue.claimed')).toEqual([{ attributes: Q, value: 1 }]);
    expect(c.points('waitgate.queue.admission.rate')).toEqual([{ attributes: Q, value: 50 }]);

    // Queue-wide totals from the store, and this instance's transitions from its events.
    expect(c.by('waitgate.queue.transitions', 'waitgate.transition')).toEqual({ entered: 100, admitted: 50, abandoned: 5, consumed: 20, expired: 0 });
    expect(c.by('waitgate.member.transitions', 'waitgate.transition')).toEqual({
      entered: 100,
      admitted: 50,
      abandoned: 5,
      claimed: 22,
      consumed: 20,
      released: 1,
      left: 1,
    });

    // The wait: 50 admissions of 6 s each, in the advised buckets.
    const wait = c.histogram('waitgate.queue.wait.duration', Q)!;
    expect(wait.count).toBe(50);
    expect(wait.sum).toBeCloseTo(300, 6);
    expect(wait.buckets.boundaries).toEqual(WAIT_BUCKETS);
    expect(wait.buckets.counts[WAIT_BUCKETS.indexOf(10)]).toBe(50); // (5, 10]

    // Store calls, by operation: exactly the calls this scenario made.
    const calls = (operation: string) => c.histogram('waitgate.store.operation.duration', { ...Q, 'waitgate.store.operation': operation })?.count;
    expect(calls('enter')).toBe(100);
    expect(calls('claim')).toBe(22);
    expect(calls('consume')).toBe(20);
    expect(calls('release')).toBe(1);
    expect(calls('leave')).toBe(1);
    expect(calls('stats')).toBe(1); // the collection's own
    expect(calls('admit')).toBeGreaterThanOrEqual(1);
    expect(c.histogram('waitgate.store.operation.duration', { ...Q, 'waitgate.store.operation': 'enter' })!.buckets.boundaries).toEqual(STORE_BUCKETS);
    expect(c.histograms('waitgate.store.operation.duration').filter((p) => 'error.type' in p.attributes)).toEqual([]);

    // Every point says which queue it is about.
    for (const point of c.allPoints()) expect(point.attributes['waitgate.queue.name'], point.name).toBe(NAME);
  });

  it('the admission rate follows the store clock, and a second collection reads stats() again', async () => {
    const { queue, clock } = setup();
    const otel = testMeter();
    instrumentQueue(queue, { meter: otel.meter });
    await runSale(queue, clock);
    clock.now += 4000; // 50 admissions over the 4 s since they were made
    const c = await otel.collect();
    expect(c.value('waitgate.queue.admission.rate', Q)).toBe(12.5);
    expect(c.histogram('waitgate.store.operation.duration', { 'waitgate.store.operation': 'stats' })!.count).toBe(1);
    const again = await otel.collect();
    expect(again.histogram('waitgate.store.operation.duration', { 'waitgate.store.operation': 'stats' })!.count).toBe(2);
  });

  it('records only the instrumented queue: another instance and another queue in the process are not counted', async () => {
    const { queue, make, clock } = setup();
    const other = make(); // same store and name: another app instance
    const elsewhere = make({ name: 'elsewhere' });
    const otel = testMeter();
    instrumentQueue(queue, { meter: otel.meter });
    await queue.enter('a');
    await other.enter('b');
    await elsewhere.enter('c');
    clock.now += 1000;
    await other.admit();
    const c = await otel.collect();
    expect(c.by('waitgate.member.transitions', 'waitgate.transition')).toEqual({ entered: 1 });
    expect(c.histogram('waitgate.store.operation.duration', { 'waitgate.store.operation': 'enter' })!.count).toBe(1);
    expect(c.histogram('waitgate.store.operation.duration', { 'waitgate.store.operation': 'admit' })).toBeUndefined();
    expect(c.histograms('waitgate.queue.wait.duration')).toEqual([]);
    // Queue-wide figures are the queue's, whichever instance changed it.
    expect(c.by('waitgate.queue.transitions', 'waitgate.transition')).toMatchObject({ entered: 2, admitted: 2 });
    expect(c.value('waitgate.queue.active', Q)).toBe(2);
  });
});

describe('instrumentQueue: stop, failures, no SDK', () => {
  it('records nothing more after stop(): no listener, no observable callback, no channel subscription', async () => {
    const { queue, clock } = setup();
    const otel = testMeter();
    const instrumentation = instrumentQueue(queue, { meter: otel.meter });
    await queue.enter('a');
    const before = await otel.collect();
    expect(before.by('waitgate.member.transitions', 'waitgate.transition')).toEqual({ entered: 1 });
    expect(before.value('waitgate.queue.waiting', Q)).toBe(1);
    instrumentation.stop();
    instrumentation.stop(); // idempotent

    const stats = vi.spyOn(queue, 'stats');
    await queue.enter('b');
    clock.now += 1000;
    await queue.admit();
    const after = await otel.collect();
    expect(stats).not.toHaveBeenCalled();
    // The SDK keeps showing the last observed values; every instrument shows what it had at stop().
    expect(after.value('waitgate.queue.waiting', Q)).toBe(1); // two entered, both admitted since
    expect(after.value('waitgate.queue.active', Q)).toBe(0);
    expect(after.by('waitgate.member.transitions', 'waitgate.transition')).toEqual({ entered: 1 });
    expect(after.histogram('waitgate.store.operation.duration', { 'waitgate.store.operation': 'enter' })!.count).toBe(1);
    expect(after.histogram('waitgate.store.operation.duration', { 'waitgate.store.operation': 'admit' })).toBeUndefined();
    expect(after.histograms('waitgate.queue.wait.duration')).toEqual([]);
  });

  it('a failing stats() during collection records no queue figures, throws nothing, and shows as a failed store call', async () => {
    const { queue, faults } = setup();
    const otel = testMeter();
    instrumentQueue(queue, { meter: otel.meter });
    await queue.enter('a');
    faults.stats = true;
    const c = await otel.collect(); // collect() throws on any collection error
    for (const name of [
      'waitgate.queue.waiting',
      'waitgate.queue.active',
      'waitgate.queue.claimed',
      'waitgate.queue.admission.rate',
      'waitgate.queue.transitions',
    ]) {
      expect(c.points(name), name).toEqual([]);
    }
    const failed = c.histograms('waitgate.store.operation.duration').find((p) => p.attributes['waitgate.store.operation'] === 'stats');
    expect(failed?.attributes['error.type']).toBe('STORE_UNAVAILABLE');
    expect(c.by('waitgate.member.transitions', 'waitgate.transition')).toEqual({ entered: 1 });

    faults.stats = false; // the store is back: the figures are back
    expect((await otel.collect()).value('waitgate.queue.waiting', Q)).toBe(1);
  });

  it('without a meter and without an SDK: uses the global API, records nothing and throws nothing', async () => {
    const getMeter = vi.spyOn(metrics, 'getMeter');
    const { queue, clock } = setup();
    const stats = vi.spyOn(queue, 'stats');
    const instrumentation = instrumentQueue(queue);
    expect(getMeter).toHaveBeenCalledWith('waitgate', VERSION);
    await runSale(queue, clock);
    expect(stats).not.toHaveBeenCalled(); // the no-op meter never collects
    instrumentation.stop();
  });

  it('without a meter, records on the global MeterProvider registered before the call', async () => {
    const otel = testMeter();
    expect(metrics.setGlobalMeterProvider(otel.provider)).toBe(true);
    const { queue } = setup();
    instrumentQueue(queue);
    await queue.enter('a');
    const c = await otel.collect();
    expect(c.value('waitgate.queue.waiting', Q)).toBe(1);
    expect(c.by('waitgate.member.transitions', 'waitgate.transition')).toEqual({ entered: 1 });
  });

  it('refuses an unknown option, a meter that is not one, and a queue that is not one', () => {
    const { queue } = setup();
    expect(() => instrumentQueue(queue, { metre: {} } as never)).toThrow(WaitgateConfigError);
    expect(() => instrumentQueue(queue, { meter: {} as never })).toThrow(/meter/);
    expect(() => instrumentQueue({} as never)).toThrow(/queue/);
  });

  it('names the package version as the scope version', () => {
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
    expect(VERSION).toBe(pkg.version);
  });
});
