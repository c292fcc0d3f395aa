// The wait a waiting member is told, through WaitingQueue on MemoryStore's clock:
// it never shrinks while the line stands still, and the head is never told 0 s.

import { describe, expect, it } from 'vitest';
import { MemoryStore, WaitingQueue } from '../src/index.js';

const T0 = 1_700_000_000_000;

function queueOnClock(options: { admitRatePerSecond?: number; maxActive?: number | null } = {}) {
  let now = T0;
  const store = new MemoryStore({ now: () => now });
  const queue = new WaitingQueue({ store, name: 'estimate', admitRatePerSecond: options.admitRatePerSecond ?? 10, maxActive: options.maxActive ?? null });
  return { queue, advance: (ms: number) => void (now += ms) };
}

describe('wait estimate of a stalled line', () => {
  it('never reports a shorter wait while nothing moves (maxActive full, nobody ordering)', async () => {
    const { queue, advance } = queueOnClock({ admitRatePerSecond: 10, maxActive: 20 });
    for (let i = 0; i < 100; i++) await queue.enter(`m${i}`);
    // Two seconds of admissions at 10/s fill maxActive (the bucket starts full: 10 + 10).
    await queue.admit();
    advance(1000);
    await queue.admit();
    expect((await queue.stats()).active).toBe(20);
    const member = 'm70'; // rank 50 of the 80 left
    expect((await queue.position(member)).rank).toBe(50);

    // The admitter keeps running every second; nobody consumes, so nothing is admitted.
    const estimates: number[] = [];
    for (let s = 0; s < 35; s++) {
      advance(1000);
      expect(await queue.admit()).toEqual([]);
      const p = await queue.position(member);
      expect(p.rank).toBe(50);
      estimates.push(p.estimatedWaitSeconds!);
    }
    for (let i = 1; i < estimates.length; i++) expect(estimates[i]!).toBeGreaterThanOrEqual(estimates[i - 1]!);
    // And it grew: after 35 s of standing still the line is not assumed to move at its old pace.
    expect(estimates[estimates.length - 1]!).toBeGreaterThan(estimates[0]!);
  });

  it('never reports a shorter wait while no admitter runs', async () => {
    const { queue, advance } = queueOnClock({ admitRatePerSecond: 10 });
    for (let i = 0; i < 60; i++) await queue.enter(`m${i}`);
    await queue.admit(); // 10 admitted, 50 left: the line moved once
    const estimates: number[] = [];
    for (let s = 0; s < 40; s++) {
      advance(1000);
      estimates.push((await queue.position('m59')).estimatedWaitSeconds!);
    }
    for (let i = 1; i < estimates.length; i++) expect(estimates[i]!).toBeGreaterThanOrEqual(estimates[i - 1]!);
  });

  it('plans with the observed pace again once the line moves', async () => {
    const { queue, advance } = queueOnClock({ admitRatePerSecond: 10, maxActive: 10 });
    for (let i = 0; i < 100; i++) await queue.enter(`m${i}`);
    await queue.admit(); // 10 in, maxActive full
    advance(30_000);
    await queue.admit();
    const stalled = (await queue.position('m60')).estimatedWaitSeconds!;
    // Five members order: five places free up, the line moves.
    for (let i = 0; i < 5; i++) {
      const { entryToken } = (await queue.token(`m${i}`))!;
      await queue.consume(await queue.claim(`m${i}`, entryToken));
    }
    await queue.admit();
    const moving = await queue.position('m60');
    expect(moving.rank).toBe(45);
    expect(moving.estimatedWaitSeconds!).toBeLessThan(stalled);
  });
});

describe('wait estimate at the head', () => {
  it('never tells a waiting member 0 seconds, even at rank 0', async () => {
    const { queue } = queueOnClock({ admitRatePerSecond: 1000 });
    const first = await queue.enter('alice');
    expect(first).toMatchObject({ status: 'WAITING', rank: 0 });
    expect(first.estimatedWaitSeconds).toBe(1);
    await queue.enter('bob');
    expect((await queue.position('bob')).estimatedWaitSeconds).toBe(1);
  });
});
