// The abandonment contract (SPEC §8): one suite, run unchanged against MemoryStore,
// RedisStore, a Cluster and the least-privilege ACL user. Time moves through the
// harness's `elapse` (a fake clock jump in memory, a real sleep on Redis).

import { describe, expect, it } from 'vitest';
import { WaitingQueue, type WaitingQueueOptions } from '../../src/index.js';
import type { StoreHarness } from './store-contract.js';
import { uniqueName } from '../support/unique.js';

/** Short times, so the Redis runs stay short: polls every second, silence of 5 s is death. */
const FAST: Partial<WaitingQueueOptions> = { pollingIntervals: [{ seconds: 1 }], abandonAfterSeconds: 5 };

export function describeAbandonmentContract(label: string, harness: StoreHarness): void {
  async function setup(options: Partial<WaitingQueueOptions> = {}) {
    const { store, elapse } = await harness.create();
    const name = uniqueName('ab');
    const make = (extra: Partial<WaitingQueueOptions> = {}) => new WaitingQueue({ store, name, ...FAST, ...options, ...extra });
    return { store, elapse, queue: make(), make };
  }

  /** Lets `ms` pass in steps of at most 1 s, polling `alive` at each step (their interval). */
  async function live(elapse: (ms: number) => Promise<void>, ms: number, poll: () => Promise<unknown>) {
    for (let done = 0; done < ms; done += 1000) {
      await elapse(Math.min(1000, ms - done));
      await poll();
    }
  }

  describe(`abandonment contract: ${label}`, () => {
    it('drops a silent member at its turn, at no admission cost: the next live members are admitted in the same call', async () => {
      const { queue, elapse } = await setup({ admitRatePerSecond: 2, admitBurst: 2 });
      for (const m of ['ghost', 'alice', 'bob', 'carol']) await queue.enter(m);
      const abandoned: string[] = [];
      queue.on('abandoned', (members) => abandoned.push(...members.map((x) => x.memberId)));
      // ghost closed the tab; the others poll at their interval.
      await live(elapse, 6000, () => Promise.all(['alice', 'bob', 'carol'].map((m) => queue.position(m))));
      const admitted = (await queue.admit()).map((a) => a.memberId);
      expect(admitted).toEqual(['alice', 'bob']); // the bucket's 2 went to live members
      expect(abandoned).toEqual(['ghost']);
      expect((await queue.position('ghost')).status).toBe('NOT_ENTERED');
      expect((await queue.stats()).abandoned).toBe(1);
      // It may come back: at the back of the line.
      expect(await queue.enter('ghost')).toMatchObject({ status: 'WAITING', rank: 1 });
    });

    it('never drops a member who polls, through two instances with positionCache and no sticky routing', async () => {
      const { make, elapse } = await setup({ admitRatePerSecond: 100, admitBurst: 100 });
      const a = make({ positionCache: true });
      const b = make({ positionCache: true });
      const members = Array.from({ length: 2000 }, (_, i) => `m${i}`);
      for (let i = 0; i < members.length; i += 200) await Promise.all(members.slice(i, i + 200).map((m) => a.enter(m)));
      const abandoned: string[] = [];
      for (const q of [a, b]) q.on('abandoned', (ms) => abandoned.push(...ms.map((x) => x.memberId)));
      let admitted = 0;
      for (let second = 0; second < 8; second++) {
        await elapse(1000);
        // Every member still waiting polls once, on a random instance.
        const waiting = members.slice(admitted);
        for (let i = 0; i < waiting.length; i += 250) {
          await Promise.all(waiting.slice(i, i + 250).map((m) => (Math.random() < 0.5 ? a : b).position(m)));
        }
        admitted += (await (second % 2 ? a : b).admit()).length;
      }
      expect(admitted).toBeGreaterThan(0);
      expect(abandoned).toEqual([]);
    });

    it('abandonAfterSeconds: null admits a silent member as before', async () => {
      const { queue, elapse } = await setup({ abandonAfterSeconds: null });
      await queue.enter('ghost');
      await elapse(7000);
      expect((await queue.admit()).map((x) => x.memberId)).toEqual(['ghost']);
      expect((await queue.stats()).abandoned).toBe(0);
    });

    it('drops a token nobody read within pickupTimeoutSeconds; a read one stays', async () => {
      const { queue, make, elapse } = await setup({ pickupTimeoutSeconds: 5, admitRatePerSecond: 10, maxActive: 2 });
      const other = make({ pickupTimeoutSeconds: 5 });
      for (const m of ['reader', 'absent', 'next']) await queue.enter(m);
      expect((await queue.admit()).map((x) => x.memberId)).toEqual(['reader', 'absent']);
      await elapse(1000);
      expect((await other.position('reader')).status).toBe('READY'); // read, on another instance
      await live(elapse, 5000, () => other.position('next'));
      expect((await queue.position('absent')).status).toBe('NOT_ENTERED');
      expect((await queue.position('reader')).status).toBe('READY');
      // absent's maxActive place went to the next member.
      expect((await queue.admit()).map((x) => x.memberId)).toEqual(['next']);
    });
  });
}
