// The stock contract (SPEC §18): one suite, run unchanged against MemoryStore and
// RedisStore. Stock is what a sale must never oversell: consumes take it down, tokens
// in play never exceed what is left, and at 0 the queue closes by itself.

import { describe, expect, it } from 'vitest';
import { QueueClosedError, STOCK_ACTOR, WaitgateConfigError, WaitingQueue, type WaitingQueueOptions } from '../../src/index.js';
import type { StoreHarness } from './store-contract.js';
import { uniqueName } from '../support/unique.js';

export function describeStockContract(label: string, harness: StoreHarness): void {
  async function setup(options: Partial<WaitingQueueOptions> = {}) {
    const { store } = await harness.create();
    const name = uniqueName('s');
    const make = () => new WaitingQueue({ store, name, admitRatePerSecond: 1000, admitBurst: 1000, ...options });
    return { queue: make(), make };
  }

  async function enterAll(queue: WaitingQueue, members: readonly string[]) {
    for (let i = 0; i < members.length; i += 100) await Promise.all(members.slice(i, i + 100).map((m) => queue.enter(m)));
  }

  /** Claims and consumes an admitted member's token: true when the unit is sold. */
  async function buy(queue: WaitingQueue, memberId: string, token: string): Promise<boolean> {
    return queue.consume(await queue.claim(memberId, token));
  }

  describe(`stock contract: ${label}`, { concurrent: harness.concurrent }, () => {
    it('without stock a position says nothing of it', async () => {
      const { queue } = await setup();
      expect(await queue.enter('a')).toMatchObject({ stockLeft: null, likelyServed: null });
      expect(await queue.controls()).toMatchObject({ stock: null, soldOutMessage: 'Sold out' });
    });

    it('admits no more tokens than the stock left, and tells the waiting their odds', async () => {
      const { queue } = await setup();
      await queue.setControls({ stock: 3 });
      await enterAll(queue, ['m0', 'm1', 'm2', 'm3', 'm4']);
      expect(await queue.position('m2')).toMatchObject({ stockLeft: 3, likelyServed: true });
      expect(await queue.position('m3')).toMatchObject({ stockLeft: 3, likelyServed: false });
      const admitted = await queue.admit();
      expect(admitted.map((a) => a.memberId)).toEqual(['m0', 'm1', 'm2']);
      expect(await queue.admit()).toEqual([]);
      // Three tokens in play cover the stock: the rest are unlikely to be served.
      expect(await queue.position('m3')).toMatchObject({ status: 'WAITING', rank: 0, stockLeft: 3, likelyServed: false });
      // A member who leaves with a token gives its unit back to the line.
      await queue.leave('m2');
      expect((await queue.admit()).map((a) => a.memberId)).toEqual(['m3']);
    });

    it('consumes take the stock down; the last unit closes the queue with the sold-out message', async () => {
      const { queue } = await setup();
      await queue.setControls({ stock: 2, soldOutMessage: 'All gone, thank you' });
      await enterAll(queue, ['a', 'b', 'c']);
      const [first, second] = await queue.admit();
      expect(await buy(queue, first!.memberId, first!.entryToken)).toBe(true);
      expect(await queue.controls()).toMatchObject({ stock: 1, mode: 'open' });
      const before = (await queue.controls()).version;
      expect(await buy(queue, second!.memberId, second!.entryToken)).toBe(true);
      const controls = await queue.controls();
      expect(controls).toMatchObject({ stock: 0, mode: 'closed', message: 'All gone, thank you', version: before + 1 });
      // The one still waiting learns it at its next poll; a newcomer is refused.
      expect(await queue.position('c')).toMatchObject({
        status: 'WAITING',
        queueMode: 'closed',
        message: 'All gone, thank you',
        stockLeft: 0,
        likelyServed: false,
      });
      await expect(queue.enter('d')).rejects.toBeInstanceOf(QueueClosedError);
      expect(await queue.admit()).toEqual([]);
    });

    it('the last unit sold while the operator had closed the queue is recorded in the log, as every change of the controls', async () => {
      const { queue } = await setup();
      await queue.setControls({ stock: 1 });
      await queue.enter('a');
      const [admitted] = await queue.admit();
      const claim = await queue.claim(admitted!.memberId, admitted!.entryToken);
      await queue.setControls({ mode: 'closed', message: 'Back tomorrow' }, { actor: 'ops' });
      expect(await queue.consume(claim)).toBe(true);
      const controls = await queue.controls();
      expect(controls).toMatchObject({ stock: 0, mode: 'closed', message: 'Sold out' }); // the sold-out message replaces the operator's
      const [last] = await queue.controlsLog({ limit: 1 });
      expect(last).toMatchObject({ actor: STOCK_ACTOR, version: controls.version, patch: { mode: 'closed', message: 'Sold out' } });
    });

    it('stock set to 0 closes the queue at once with the default message; clearing it lifts the cap', async () => {
      const { queue } = await setup();
      await queue.enter('a');
      expect(await queue.setControls({ stock: 0 })).toMatchObject({ stock: 0, mode: 'closed', message: 'Sold out' });
      expect(await queue.position('a')).toMatchObject({ queueMode: 'closed', message: 'Sold out', stockLeft: 0 });
      await queue.setControls({ stock: null, mode: 'open', message: null });
      expect(await queue.admit()).toHaveLength(1);
    });

    it('passthrough with stock queues newcomers and lets through only what the stock covers', async () => {
      const { queue } = await setup();
      await queue.setControls({ mode: 'passthrough', stock: 2 });
      expect((await queue.enter('a')).status).toBe('WAITING');
      await enterAll(queue, ['b', 'c']);
      expect(await queue.admit()).toHaveLength(2);
      expect(await queue.admit()).toHaveLength(0);
    });

    it('limits refuse a control change beyond them, whoever sends it, and nothing is written', async () => {
      const { queue } = await setup({ limits: { maxRatePerSecond: 100, maxBurst: 50, maxActive: 500 } });
      const before = await queue.controls();
      for (const [patch, field] of [
        [{ admitRatePerSecond: 101 }, 'admitRatePerSecond'],
        [{ admitBurst: 51, mode: 'paused' as const }, 'admitBurst'],
        [{ maxActive: 501 }, 'maxActive'],
        [{ maxActive: null }, 'maxActive'],
      ] as const) {
        const error = await queue.setControls(patch).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(WaitgateConfigError);
        expect((error as WaitgateConfigError).message).toContain(field);
      }
      expect(await queue.controls()).toEqual({ ...before, admitRatePerSecond: expect.any(Number) });
      expect((await queue.controls()).version).toBe(before.version);
      // Within them (and a rate back to the instances' own) is applied.
      expect(await queue.setControls({ admitRatePerSecond: 100, admitBurst: 50, maxActive: 500 })).toMatchObject({ version: before.version + 1 });
      expect(() => new WaitingQueue({ store: {} as never, limits: { maxRatePerSecond: -1 } })).toThrow(WaitgateConfigError);
    });

    it('4 instances consuming concurrently never oversell: stock 100, 1,000 members', async () => {
      const { queue, make } = await setup();
      await queue.setControls({ stock: 100 });
      await enterAll(
        queue,
        Array.from({ length: 1000 }, (_, i) => `m${i}`),
      );
      let sold = 0;
      const instances = [queue, make(), make(), make()];
      await Promise.all(
        instances.map(async (q) => {
          // Until sold out (a bound, should it never be: the test then fails on the count).
          for (let idle = 0; idle < 400;) {
            const admitted = await q.admit();
            if (admitted.length === 0 && (await q.controls()).stock === 0) break;
            idle = admitted.length === 0 ? idle + 1 : 0;
            // One member in five walks away with the token (its unit goes back to the line); the others buy at once.
            const walksAway = (id: string) => Number(id.slice(1)) % 5 === 0;
            const results = await Promise.all(
              admitted.map((a) => (walksAway(a.memberId) ? q.leave(a.memberId).then(() => false) : buy(q, a.memberId, a.entryToken))),
            );
            sold += results.filter(Boolean).length;
            if (admitted.length === 0) await new Promise((r) => setTimeout(r, 5));
          }
        }),
      );
      expect(sold).toBe(100);
      const stats = await queue.stats();
      expect(stats.totals.consumed).toBe(100);
      expect(await queue.controls()).toMatchObject({ stock: 0, mode: 'closed', message: 'Sold out' });
    });
  });
}
