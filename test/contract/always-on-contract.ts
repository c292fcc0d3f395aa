// The always-on contract (SPEC §18): the safety net and the audit trail, one suite run
// unchanged against MemoryStore and RedisStore.

import { describe, expect, it } from 'vitest';
import { WaitingQueue, type Store, type WaitingQueueOptions } from '../../src/index.js';
import type { EnterOptions, MemberSnapshot } from '../../src/store/store.js';
import type { StoreHarness } from './store-contract.js';
import { storeWith } from '../support/store-with.js';
import { uniqueName } from '../support/unique.js';

/** One enter as the store answered it, in the order the answers arrived. */
interface Entered {
  memberId: string;
  snapshot: MemberSnapshot;
}

export function describeAlwaysOnContract(label: string, harness: StoreHarness): void {
  /** A queue over the harness's store whose every enter call is recorded. */
  async function setup(options: Partial<WaitingQueueOptions> = {}) {
    const { store, elapse } = await harness.create();
    const history: Entered[] = [];
    const recording = storeWith(store as Store, {
      enter: async (queue: string, memberId: string, o?: EnterOptions) => {
        const snapshot = await store.enter(queue, memberId, o);
        history.push({ memberId, snapshot });
        return snapshot;
      },
    });
    const name = uniqueName('n');
    const make = (more: Partial<WaitingQueueOptions> = {}) =>
      new WaitingQueue({ store: recording, name, safetyNet: true, admitRatePerSecond: 0.001, admitBurst: 3, ...options, ...more });
    return { queue: make(), make, history, elapse };
  }

  describe(`always-on contract: ${label}`, () => {
    it('with the safety net, an enter under the rate is READY with a token in one store call', async () => {
      const { queue, history } = await setup();
      const position = await queue.enter('a');
      expect(position).toMatchObject({ status: 'READY', rank: null });
      expect(position.entryToken).toEqual(expect.any(String));
      expect(history.map((h) => h.memberId)).toEqual(['a']);
      // The token is a real one: it claims and consumes like an admitted member's.
      expect(await queue.consume(await queue.claim('a', position.entryToken))).toBe(true);
      expect(await queue.controls()).toMatchObject({ safetyNet: true });
      expect((await queue.stats()).totals).toMatchObject({ entered: 1, admitted: 1 });
    });

    it('the line forms at the edge of the bucket and drains back to instant entry', async () => {
      const { queue } = await setup();
      const statuses = [];
      for (const m of ['a', 'b', 'c', 'd', 'e']) statuses.push((await queue.enter(m)).status);
      // The burst of 3 lets three in at once; the rest wait, in order.
      expect(statuses).toEqual(['READY', 'READY', 'READY', 'WAITING', 'WAITING']);
      expect(await queue.position('e')).toMatchObject({ status: 'WAITING', rank: 1 });
      await queue.setControls({ admitRatePerSecond: 1000, admitBurst: 10 });
      expect((await queue.admit()).map((a) => a.memberId)).toEqual(['d', 'e']);
      expect((await queue.enter('f')).status).toBe('READY');
    });

    it('maxActive and stock make the line form too; the control overrides the option', async () => {
      const { queue, make } = await setup({ admitRatePerSecond: 1000, admitBurst: 1000, maxActive: 1 });
      expect((await queue.enter('a')).status).toBe('READY');
      expect((await queue.enter('b')).status).toBe('WAITING'); // maxActive 1 is full
      const other = make({ maxActive: null });
      await other.leave('b');
      await other.setControls({ stock: 2 });
      expect((await other.enter('c')).status).toBe('READY');
      expect((await other.enter('d')).status).toBe('WAITING'); // two tokens in play cover the stock
      expect(await other.setControls({ safetyNet: false })).toMatchObject({ safetyNet: false });
      await other.leave('d');
      await other.setControls({ stock: null });
      expect((await other.enter('e')).status).toBe('WAITING');
    });

    it('keeps FIFO under 500 concurrent enters with admission running: nobody instant while anyone waits', async () => {
      const { queue, make, history } = await setup({ admitRatePerSecond: 200, admitBurst: 20 });
      const admitter = make();
      const members = Array.from({ length: 500 }, (_, i) => `m${i}`);
      let entering = true;
      const admitted: string[] = [];
      const admitting = (async () => {
        while (entering) {
          admitted.push(...(await admitter.admit()).map((a) => a.memberId));
          await new Promise((r) => setTimeout(r, 2));
        }
      })();
      await Promise.all(members.map((m) => queue.enter(m)));
      entering = false;
      await admitting;
      const instant = history.filter((h) => h.snapshot.joined && h.snapshot.status === 'READY');
      const waited = history.filter((h) => h.snapshot.joined && h.snapshot.status === 'WAITING');
      expect(instant.length + waited.length).toBe(500);
      expect(instant.length).toBeGreaterThanOrEqual(20); // the burst at least
      expect(waited.length).toBeGreaterThan(0); // 500 at once exceed the bucket
      // Each instant entry was judged with the line empty (its count read in the same atomic step).
      for (const h of instant) expect(h.snapshot.totalWaiting).toBe(0);
      // Admission served the waiting in the order they joined (entry scores rise along it).
      const scoreOf = new Map(waited.map((h) => [h.memberId, h.snapshot.score!]));
      const served = admitted.filter((m) => scoreOf.has(m)).map((m) => scoreOf.get(m)!);
      expect(served).toEqual([...served].sort((x, y) => x - y));
    });
  });
}
