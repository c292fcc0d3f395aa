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
  it('keeps up with the configured rate when each admit() takes a real round trip', async () => {
    // Rate 100/s, default burst 100, admitter every 100 ms; each admit() waits 60 ms more
    // (a slow store). Scheduled from the end of each call, it would admit ~100 × 100/160.
    const memory = new MemoryStore();
    const slow = storeWith(memory, {
      admit: async (...args: Parameters<MemoryStore['admit']>) => {
        await sleep(60);
        return memory.admit(...args);
      },
    });
    const queue = new WaitingQueue({ store: slow, name: 'rate', admitRatePerSecond: 100, admitBurst: 10 });
    for (let i = 0; i < 2000; i++) await queue.enter(`m${i}`);
    let admitted = 0;
    queue.on('admitted', (members) => (admitted += members.length));
    const admitter = queue.startAdmitter({ intervalMs: 100 });
    await sleep(2000);
    await admitter.stop();
    // At the full rate: 10 (the full bucket) + 100/s × 2 s = 210. From the end of each call: ~135.
    expect(admitted).toBeGreaterThan(170);
  });
});
