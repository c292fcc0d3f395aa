// startAdmitter: strict options, a fixed rate whatever each call takes.

import { describe, expect, it } from 'vitest';
import { MemoryStore, WaitgateConfigError, WaitingQueue } from '../src/index.js';
import { sleep } from './support/unique.js';
import { storeWith } from './support/store-with.js';

describe('startAdmitter options', () => {
  it.each([
    [{ interval: 500 }, 'interval'],
    [{ intervalMs: 0 }, 'intervalMs'],
    [{ intervalMs: 1.5 }, 'intervalMs'],
    [{ intervalMs: '1000' }, 'intervalMs'],
  ])('refuses %j, naming %s', (options, option) => {
    const queue = new WaitingQueue({ store: new MemoryStore() });
    let error: unknown;
    try {
      queue.startAdmitter(options as never);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(WaitgateConfigError);
    expect((error as WaitgateConfigError).option).toBe(option);
  });
});

describe('admitter schedule', () => {
  it('keeps up with the configured rate when each admit() takes a real round trip (calls start on a fixed schedule)', async () => {
    // Rate 100/s, burst 10, admitter every 100 ms; each admit() waits 60 ms more (a slow
    // store). On a fixed schedule a call starts every max(100 ms, its duration); scheduled
    // from the end of each call it would start every 100 ms + its duration, and admit
    // ~100 × 100/160 a second. Judged from the calls' own start times and durations, so a
    // machine that slows every timer down (CI on 2 shared cores) does not decide it.
    const memory = new MemoryStore();
    const starts: number[] = [];
    const durations: number[] = [];
    const slow = storeWith(memory, {
      admit: async (...args: Parameters<MemoryStore['admit']>) => {
        const started = performance.now();
        starts.push(started);
        await sleep(60);
        const result = await memory.admit(...args);
        durations.push(performance.now() - started);
        return result;
      },
    });
    const queue = new WaitingQueue({ store: slow, name: 'rate', admitRatePerSecond: 100, admitBurst: 10 });
    for (let i = 0; i < 2000; i++) await queue.enter(`m${i}`);
    let admitted = 0;
    queue.on('admitted', (members) => (admitted += members.length));
    const admitter = queue.startAdmitter({ intervalMs: 100 });
    await sleep(2000);
    await admitter.stop();
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const spacing = median(starts.slice(1).map((t, i) => t - starts[i]!));
    const duration = median(durations);
    // Fixed schedule: about max(100, duration); from the end of each call: 100 + duration.
    expect(spacing).toBeLessThan(100 + duration / 2);
    expect(admitted).toBeGreaterThan(0);
  });
});
