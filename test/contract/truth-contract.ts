// What operators see must be what happens (SPEC §14): one suite, run unchanged against
// MemoryStore and RedisStore. Each case reproduces a defect found on a live sale.
// Time moves through the harness's `elapse` (a fake clock jump in memory, a real sleep on Redis).

import { describe, expect, it } from 'vitest';
import { WaitingQueue, type WaitingQueueOptions } from '../../src/index.js';
import type { StoreHarness } from './store-contract.js';
import { uniqueName } from '../support/unique.js';

export function describeTruthContract(label: string, harness: StoreHarness): void {
  async function setup(options: Partial<WaitingQueueOptions> = {}) {
    const { store, elapse } = await harness.create();
    const name = uniqueName('t');
    const make = (extra: Partial<WaitingQueueOptions> = {}) => new WaitingQueue({ store, name, ...options, ...extra });
    return { store, elapse, name, queue: make(), make };
  }

  async function enterAll(queue: WaitingQueue, members: readonly string[]) {
    for (let i = 0; i < members.length; i += 100) await Promise.all(members.slice(i, i + 100).map((m) => queue.enter(m)));
  }

  const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

  describe(`truth contract: ${label}`, { concurrent: harness.concurrent }, () => {
    it('a rate raised at runtime raises what is admitted when admitBurst was never set (the burst follows the rate in force)', async () => {
      const { queue, make, elapse } = await setup({ admitRatePerSecond: 1 });
      await enterAll(queue, ids('m', 120));
      await queue.setControls({ admitRatePerSecond: 20 });
      expect((await queue.controls()).admitBurst).toBe(20);
      const admitter = make({ admitRatePerSecond: 1 }); // an instance that only admits, with its own options
      await admitter.admit(); // the bucket starts full: up to one burst
      await elapse(1000);
      const second = await admitter.admit();
      expect(second.length).toBeGreaterThanOrEqual(19);
      expect(second.length).toBeLessThanOrEqual(21);
    });

    it('a pinned 200/s is the rate achieved: an admitter every second admits within 5% of 200 × the time (plus one burst)', async () => {
      const { queue, elapse } = await setup({ admitRatePerSecond: 50 });
      await enterAll(queue, ids('m', 2400));
      await queue.setControls({ admitRatePerSecond: 200 });
      await queue.admit(); // the bucket starts full: one burst
      const started = performance.now();
      let admitted = 0;
      for (let step = 0; step < 10; step++) {
        await elapse(1000);
        admitted += (await queue.admit()).length;
      }
      const seconds = Math.max(10, (performance.now() - started) / 1000); // the fake clock moved 10 s
      expect(admitted).toBeGreaterThanOrEqual(Math.floor(0.95 * 200 * Math.min(seconds, 10)));
      expect(admitted).toBeLessThanOrEqual(200 * seconds + 200);
      const stats = await queue.stats();
      expect(stats.admitRatePerSecond).toBe(200);
    });

    it('a burst that was set stays the burst when the rate changes', async () => {
      const { queue, elapse } = await setup({ admitRatePerSecond: 1, admitBurst: 3 });
      await enterAll(queue, ids('m', 40));
      await queue.setControls({ admitRatePerSecond: 20 });
      expect((await queue.controls()).admitBurst).toBe(3);
      await queue.admit();
      await elapse(1000);
      expect(await queue.admit()).toHaveLength(3);
    });

    it('stats().admittedPerSecond counts steps that admit everyone waiting', async () => {
      const { queue, elapse } = await setup({ admitRatePerSecond: 50 });
      for (let step = 0; step < 5; step++) {
        await enterAll(queue, ids(`s${step}-`, 3));
        expect(await queue.admit()).toHaveLength(3); // the line drains at every step
        if (step < 4) await elapse(1000);
      }
      const stats = await queue.stats();
      expect(stats.totals.admitted).toBe(15);
      // 15 admitted over the 4 s since the first step: about 3.75 a second.
      expect(stats.admittedPerSecond).toBeGreaterThan(3);
      expect(stats.admittedPerSecond).toBeLessThan(4.5);
    });

    it('estimates follow a line that maxActive holds back: the pace measured by the store, whichever instance admits', async () => {
      const { queue, make, elapse } = await setup({ admitRatePerSecond: 10, maxActive: 2 });
      const admitter = make();
      await enterAll(queue, ids('m', 40));
      for (let step = 0; step < 6; step++) {
        for (const a of await admitter.admit()) await admitter.consume(await admitter.claim(a.memberId, a.entryToken));
        await elapse(1000);
      }
      // 2 admitted a second of the 10 the bucket offers: rank 20 waits about 10 s, not 2 s.
      const estimate = (await queue.position('m30')).estimatedWaitSeconds!;
      expect(estimate).toBeGreaterThanOrEqual(8);
      expect(estimate).toBeLessThanOrEqual(12);
    });

    it('an instance that only admits drops no live member after an operator lowers the rate (drop pace from the controls in the store)', async () => {
      const options = { admitRatePerSecond: 50, pollingIntervals: [{ seconds: 1 }], abandonAfterSeconds: 5 };
      const { queue: poller, make, elapse } = await setup(options);
      const admitter = make(); // never answers a poll: it knows the controls only from the store
      const dead = ids('dead', 100);
      const alive = ids('live', 10);
      await poller.setControls({ admitRatePerSecond: 5, admitBurst: 5 });
      await poller.position('someone'); // the poller reads the lowered controls
      await admitter.admit(); // the admitter's first step: nobody waits yet
      await enterAll(poller, dead);
      await enterAll(poller, alive);
      const abandoned: string[] = [];
      admitter.on('abandoned', (members) => abandoned.push(...members.map((m) => m.memberId)));
      const admitted: string[] = [];
      for (let second = 0; second < 20 && alive.some((m) => !admitted.includes(m) && !abandoned.includes(m)); second++) {
        await Promise.all(alive.filter((m) => !admitted.includes(m)).map((m) => poller.position(m)));
        await elapse(1000);
        await Promise.all(alive.filter((m) => !admitted.includes(m)).map((m) => poller.position(m)));
        admitted.push(...(await admitter.admit()).map((a) => a.memberId));
      }
      expect(abandoned.filter((m) => m.startsWith('live'))).toEqual([]);
      expect(alive.filter((m) => admitted.includes(m))).toEqual(alive);
    });

    it('a member who left and entered again is recorded at its next poll near the head, by the instance that recorded it before', async () => {
      const options = { admitRatePerSecond: 1, pollingIntervals: [{ seconds: 1 }], abandonAfterSeconds: 20, positionCache: false as const };
      const { queue: poller, make } = await setup(options);
      const other = make(); // the member's leave, its new entry and the admission go through another instance
      await poller.enter('m');
      await poller.position('m'); // recorded now (its first sign of life is sent at once)
      await other.leave('m');
      await enterAll(other, ids('ahead', 60)); // the line grew past the presence head: m's new entry is not recorded
      await other.enter('m');
      await Promise.all(ids('ahead', 60).map((a) => other.leave(a)));
      expect((await poller.position('m')).rank).toBe(0); // polling on time, at the head
      await poller.admit().catch(() => undefined); // flushes the poller's signs of life (it admits m or nobody)
      const inspected = await other.inspect('m');
      expect(inspected.status === 'READY' || inspected.lastSeenAt !== null).toBe(true);
      if (inspected.status === 'WAITING') expect((await other.admit()).map((a) => a.memberId)).toEqual(['m']);
    });

    it('a token read in the last second before its pick-up deadline is not dropped', async () => {
      const options = { pickupTimeoutSeconds: 5, abandonAfterSeconds: 60, admitRatePerSecond: 10, maxActive: 1, pollingIntervals: [{ seconds: 1 }] };
      const { queue: admitter, make, elapse } = await setup(options);
      const reader = make();
      await admitter.enter('m');
      await admitter.enter('w'); // waits behind m (maxActive 1)
      expect(await admitter.admit()).toHaveLength(1);
      await elapse(4100);
      await reader.position('w'); // the reader records what it answered (a flush now)
      await elapse(500);
      expect((await reader.position('m')).status).toBe('READY'); // read 0.4 s before the deadline
      await elapse(700); // past the deadline, before the reader's next flush
      await admitter.admit(); // another instance's step reaps
      await elapse(400);
      await reader.admit(); // the reader flushes what it answered
      await elapse(2000);
      await admitter.admit();
      expect((await admitter.inspect('m')).status).toBe('READY');
    });

    it('a committed draw is final: cancelling and rescheduling keeps the seed and its commitment', async () => {
      const { queue } = await setup();
      const opensAt = Date.now() + 120_000;
      const first = await queue.setControls({ opensAt, shuffle: true });
      expect(first.drawCommitment).toMatch(/^[0-9a-f]{64}$/);
      await enterAll(queue, ids('early', 5));
      const cancelled = await queue.setControls({ opensAt: null });
      const again = await queue.setControls({ opensAt: Date.now() + 60_000, shuffle: true });
      expect(cancelled.drawCommitment).toBe(first.drawCommitment);
      expect(again.drawCommitment).toBe(first.drawCommitment);
      expect(cancelled.drawSeed).not.toBeNull(); // open (cancelled): the seed is revealed
      expect(cancelled.drawSeed).toBe((await queue.controls()).drawSeed ?? cancelled.drawSeed);
    });

    it('a shuffled schedule whose opening has passed can be removed (schedule --cancel): no new draw, the commitment stays', async () => {
      const { queue, elapse } = await setup();
      const first = await queue.setControls({ opensAt: Date.now() + 1000, shuffle: true });
      await enterAll(queue, ids('drawn', 3));
      await elapse(1500);
      const removed = await queue.setControls({ opensAt: null });
      expect(removed.opensAt).toBeNull();
      expect(removed.drawCommitment).toBe(first.drawCommitment);
      expect(removed.version).toBe(first.version + 1);
    });

    it('a new draw after an empty pre-queue gets a new seed', async () => {
      const { queue } = await setup();
      const first = await queue.setControls({ opensAt: Date.now() + 120_000, shuffle: true });
      await queue.setControls({ opensAt: null });
      const again = await queue.setControls({ opensAt: Date.now() + 60_000, shuffle: true });
      expect(again.drawCommitment).not.toBe(first.drawCommitment);
    });
  });
}
