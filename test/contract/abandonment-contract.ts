// The abandonment contract (SPEC §8): one suite, run unchanged against MemoryStore,
// RedisStore, a Cluster and the least-privilege ACL user. Time moves through the
// harness's `elapse` (a fake clock jump in memory, a real sleep on Redis).

import { describe, expect, it } from 'vitest';
import { WaitingQueue, type WaitingQueueOptions } from '../../src/index.js';
import type { AdmitResult, Store } from '../../src/store/store.js';
import { PICKUP_GRACE_MS } from '../../src/rates.js';
import type { StoreHarness } from './store-contract.js';
import { uniqueName } from '../support/unique.js';

/** Short times, so the Redis runs stay short: polls every second, silence of 5 s is death. */
const FAST: Partial<WaitingQueueOptions> = { pollingIntervals: [{ seconds: 1 }], abandonAfterSeconds: 5 };
/** Hold at the head: silent for 3 s is held (the floor with 1 s polls is 2.7 s), for 7 s dropped. */
const HOLD: Partial<WaitingQueueOptions> = { abandonAfterSeconds: 7, holdSilentAfterSeconds: 3 };

/** The store, its every method bound, with each admission step's result kept in `steps`. */
function recording(store: Store): { store: Store; steps: AdmitResult[] } {
  const steps: AdmitResult[] = [];
  const bound: Record<string, unknown> = {};
  for (let proto: object | null = store; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto) as object | null) {
    for (const key of Object.getOwnPropertyNames(proto)) {
      const value = (store as unknown as Record<string, unknown>)[key];
      if (key !== 'constructor' && !(key in bound) && typeof value === 'function') bound[key] = (value as (...args: unknown[]) => unknown).bind(store);
    }
  }
  bound.admit = async (...args: Parameters<Store['admit']>) => {
    const result = await store.admit(...args);
    steps.push(result);
    return result;
  };
  return { store: bound as unknown as Store, steps };
}

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

  describe(`abandonment contract: ${label}`, { concurrent: harness.concurrent }, () => {
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

    describe('holdSilentAfterSeconds: hold at the head', () => {
      async function setupHold(options: Partial<WaitingQueueOptions> = {}) {
        const { store, elapse } = await harness.create();
        const recorded = recording(store);
        const name = uniqueName('hold');
        const make = (extra: Partial<WaitingQueueOptions> = {}) => new WaitingQueue({ store: recorded.store, name, ...FAST, ...HOLD, ...options, ...extra });
        const queue = make();
        const abandoned: string[] = [];
        queue.on('abandoned', (members) => abandoned.push(...members.map((x) => x.memberId)));
        return { queue, make, elapse, steps: recorded.steps, abandoned };
      }

      it('holds a member silent past the hold, not yet abandoned: the next live members are admitted in the same call; after its next poll it is admitted first', async () => {
        const { queue, elapse, steps, abandoned } = await setupHold({ admitRatePerSecond: 2, admitBurst: 2 });
        for (const m of ['quiet', 'alice', 'bob', 'carol']) await queue.enter(m);
        // quiet is silent 4 s (> 3, < 7); the others poll every second.
        await live(elapse, 4000, () => Promise.all(['alice', 'bob', 'carol'].map((m) => queue.position(m))));
        expect((await queue.admit()).map((a) => a.memberId)).toEqual(['alice', 'bob']); // the bucket's 2 went to live members
        expect(steps.at(-1)).toMatchObject({ held: 1, abandoned: [] });
        expect(abandoned).toEqual([]);
        expect((await queue.stats()).waiting).toBe(2); // quiet kept its place (stats are no sign of life)
        // quiet comes back: still first in line, it is admitted first by the next step.
        expect(await queue.position('quiet')).toMatchObject({ status: 'WAITING', rank: 0 });
        await elapse(1000);
        await queue.position('carol');
        expect((await queue.admit()).map((a) => a.memberId)).toEqual(['quiet', 'carol']);
        expect(steps.at(-1)).toMatchObject({ held: 0, abandoned: [] });
        expect(abandoned).toEqual([]);
        expect((await queue.stats()).abandoned).toBe(0);
      });

      it('drops a held member once its silence reaches abandonAfterSeconds', async () => {
        const { queue, elapse, steps, abandoned } = await setupHold({ admitRatePerSecond: 1, admitBurst: 1 });
        for (const m of ['quiet', 'alice', 'bob']) await queue.enter(m);
        await live(elapse, 4000, () => Promise.all(['alice', 'bob'].map((m) => queue.position(m))));
        expect((await queue.admit()).map((a) => a.memberId)).toEqual(['alice']);
        expect(steps.at(-1)).toMatchObject({ held: 1 });
        // 4 s more: quiet has been silent 8 s (> 7): dropped at no admission cost, bob admitted.
        await live(elapse, 4000, () => queue.position('bob'));
        expect((await queue.admit()).map((a) => a.memberId)).toEqual(['bob']);
        expect(steps.at(-1)).toMatchObject({ held: 0, abandoned: ['quiet'] });
        expect(abandoned).toEqual(['quiet']);
        expect((await queue.position('quiet')).status).toBe('NOT_ENTERED');
        expect((await queue.stats()).abandoned).toBe(1);
      });

      it('holdSilentAfterSeconds: null (the default) admits a member silent for less than abandonAfterSeconds, as before', async () => {
        const { queue, elapse, steps } = await setupHold({ admitRatePerSecond: 2, admitBurst: 2, holdSilentAfterSeconds: null });
        for (const m of ['quiet', 'alice', 'bob']) await queue.enter(m);
        await live(elapse, 4000, () => Promise.all(['alice', 'bob'].map((m) => queue.position(m))));
        expect((await queue.admit()).map((a) => a.memberId)).toEqual(['quiet', 'alice']);
        expect(steps.at(-1)).toMatchObject({ held: 0, abandoned: [] });
      });

      it('never holds a member who polls at its interval, through two instances with positionCache and no sticky routing', async () => {
        const { make, elapse, steps } = await setupHold({ admitRatePerSecond: 20, admitBurst: 20 });
        const a = make({ positionCache: true });
        const b = make({ positionCache: true });
        const members = Array.from({ length: 200 }, (_, i) => `m${String(i).padStart(3, '0')}`);
        for (const m of members) await (members.indexOf(m) % 2 ? a : b).enter(m);
        const abandoned: string[] = [];
        for (const q of [a, b]) q.on('abandoned', (ms) => abandoned.push(...ms.map((x) => x.memberId)));
        const admitted: string[] = [];
        for (let second = 0; second < 8; second++) {
          await elapse(1000);
          // Every member still waiting polls once, on a random instance.
          await Promise.all(members.slice(admitted.length).map((m) => (Math.random() < 0.5 ? a : b).position(m)));
          admitted.push(...(await (second % 2 ? a : b).admit()).map((x) => x.memberId));
        }
        expect(admitted.length).toBeGreaterThan(100);
        expect(admitted).toEqual(members.slice(0, admitted.length)); // in line order: nobody held, nobody skipped
        expect(steps.reduce((sum, step) => sum + (step.held ?? 0), 0)).toBe(0);
        expect(abandoned).toEqual([]);
      });

      it('holds at most 256 members a step, then admits the silent as without holding; live members behind fewer held ones are admitted past them', async () => {
        // Rate 25: the presence head, 2 × (25 + 25 × 7) = 400, covers all 301 (their enter is a sign of life).
        const { queue, elapse, steps } = await setupHold({ admitRatePerSecond: 25, admitBurst: 25 });
        const quiet = Array.from({ length: 300 }, (_, i) => `q${String(i).padStart(3, '0')}`);
        for (let i = 0; i < quiet.length; i += 100) await Promise.all(quiet.slice(i, i + 100).map((m) => queue.enter(m)));
        await queue.enter('alice');
        // All 300 silent 4 s; alice polls.
        await live(elapse, 4000, () => queue.position('alice'));
        // Beyond 256 held, the silent are admitted as without holding: the held never stall the line.
        expect((await queue.admit()).map((a) => a.memberId)).toEqual(quiet.slice(256, 281));
        expect(steps.at(-1)).toMatchObject({ held: 256, abandoned: [] });
        expect((await queue.stats()).waiting).toBe(301 - 25);
        // 200 of them come back (q100 … q299): the step holds the first 100 and admits past them, in line order.
        await elapse(1000);
        await Promise.all([...quiet.slice(100), 'alice'].map((m) => queue.position(m)));
        expect((await queue.admit()).map((a) => a.memberId)).toEqual(quiet.slice(100, 125));
        expect(steps.at(-1)).toMatchObject({ held: 100, abandoned: [] });
        expect((await queue.stats()).waiting).toBe(301 - 50);
      });
    });

    it('drops a token nobody read within pickupTimeoutSeconds; a read one stays', async () => {
      const { queue, make, elapse } = await setup({ pickupTimeoutSeconds: 5, admitRatePerSecond: 10, maxActive: 2 });
      const other = make({ pickupTimeoutSeconds: 5 });
      for (const m of ['reader', 'absent', 'next']) await queue.enter(m);
      expect((await queue.admit()).map((x) => x.memberId)).toEqual(['reader', 'absent']);
      await elapse(1000);
      expect((await other.position('reader')).status).toBe('READY'); // read, on another instance
      // The pick-up deadline, then its grace (a READY answer is recorded at the next flush).
      await live(elapse, 5000 + PICKUP_GRACE_MS, () => other.position('next'));
      expect((await queue.position('absent')).status).toBe('NOT_ENTERED');
      expect((await queue.position('reader')).status).toBe('READY');
      // absent's maxActive place went to the next member.
      expect((await queue.admit()).map((x) => x.memberId)).toEqual(['next']);
    });
  });
}
