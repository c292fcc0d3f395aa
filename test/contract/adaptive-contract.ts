// Adaptive admission (SPEC §12): the store measures the order path (claim to consume
// or release, in its own time) and sets the admission rate in force from it, the same
// for every instance. One suite, run unchanged against MemoryStore (its clock) and
// Redis (real time), so the stores agree. The law is in src/admission-control.ts.

import { describe, expect, it } from 'vitest';
import { WaitingQueue, type Claim, type WaitingQueueOptions } from '../../src/index.js';
import type { StoreHarness } from './store-contract.js';
import { uniqueName } from '../support/unique.js';

const ADAPTIVE = { mode: 'adaptive', targetLatencyMs: 100, minRatePerSecond: 2, maxRatePerSecond: 20 } as const;
/** A little over the law's evaluation period (1 s of the store's clock). */
const SECOND = 1050;

export function describeAdaptiveContract(label: string, harness: StoreHarness): void {
  async function setup(options: Partial<WaitingQueueOptions> = {}) {
    const { store, elapse } = await harness.create();
    const name = uniqueName('ad');
    const make = (extra: Partial<WaitingQueueOptions> = {}) =>
      new WaitingQueue({ store, name, admitRatePerSecond: 20, admitBurst: 20, abandonAfterSeconds: null, admission: ADAPTIVE, ...options, ...extra });
    const queue = make();
    for (let i = 0; i < 300; i += 50) await Promise.all(Array.from({ length: 50 }, (_, j) => queue.enter(`m${i + j}`)));
    return { elapse, queue, make };
  }

  /**
   * One second of the sale: an admission step (which evaluates the law), then `orders`
   * of the admitted members claim and settle after `latencyMs`, by consume or release.
   */
  async function second(
    queue: WaitingQueue,
    elapse: (ms: number) => Promise<void>,
    orders: { count: number; latencyMs: number; fail?: boolean; failed?: boolean },
  ) {
    const admitted = await queue.admit();
    const claims = await Promise.all(admitted.slice(0, orders.count).map((a) => queue.claim(a.memberId, a.entryToken)));
    await elapse(orders.latencyMs);
    const release = (c: Claim) => (orders.failed === undefined ? queue.release(c) : queue.release(c, { failed: orders.failed }));
    await Promise.all(claims.map((c) => (orders.fail ? release(c) : queue.consume(c))));
    await elapse(SECOND - orders.latencyMs);
    return (await queue.controls()).admitRatePerSecond;
  }

  describe(`adaptive admission contract: ${label}`, { concurrent: harness.concurrent }, () => {
    it('starts at admitRatePerSecond within the bounds; orders at 4x the target halve the rate each second, down to the minimum', async () => {
      const { queue, elapse } = await setup({ admitRatePerSecond: 50 });
      expect((await queue.controls()).admitRatePerSecond).toBe(20); // 50, clamped to the maximum
      const rates: number[] = [];
      for (let i = 0; i < 5; i++) rates.push(await second(queue, elapse, { count: 3, latencyMs: 400 }));
      // The first step had no orders to judge by (20, at the maximum); then x0.5 each second
      // (target / latency = 0.25, at most halving): 10, 5, 2.5, then the minimum, 2.
      expect(rates).toEqual([20, 10, 5, 2.5, 2]);
      expect((await queue.stats()).admitRatePerSecond).toBe(2);
    });

    it('orders a little slower than the target lower the rate in proportion (a gradient)', async () => {
      const { queue, elapse } = await setup();
      await second(queue, elapse, { count: 3, latencyMs: 150 }); // no orders judged yet: 20
      const rate = await second(queue, elapse, { count: 3, latencyMs: 150 });
      // x target / latency: 100 / (150 and the calls' own few ms) = 0.67 or a little less.
      expect(rate).toBeGreaterThanOrEqual(11.5);
      expect(rate).toBeLessThanOrEqual(20 * (100 / 150) + 1e-9);
    });

    it('fast orders raise it back by maxRatePerSecond / 25 a second, up to the maximum and no further', async () => {
      const { queue, elapse } = await setup({ admitRatePerSecond: 18.5 });
      const rates: number[] = [];
      for (let i = 0; i < 4; i++) rates.push(await second(queue, elapse, { count: 2, latencyMs: 10 }));
      expect(rates.map((r) => Math.round(r * 1000) / 1000)).toEqual([18.5, 19.3, 20, 20]); // the first step had no orders: it held
    });

    it('failed orders (releases) above 10% lower it by 0.8 a second, however fast they are', async () => {
      const { queue, elapse } = await setup();
      const rates: number[] = [];
      for (let i = 0; i < 3; i++) rates.push(await second(queue, elapse, { count: 3, latencyMs: 10, fail: true }));
      expect(rates.map((r) => Math.round(r * 1000) / 1000)).toEqual([20, 16, 12.8]);
    });

    it('a release declared not failed ({ failed: false }: a 4xx answer) neither lowers nor raises it; { failed: true } and the default count a failure', async () => {
      const { queue, elapse } = await setup();
      const rates: number[] = [];
      for (const failed of [false, false, true, undefined]) rates.push(await second(queue, elapse, { count: 3, latencyMs: 10, fail: true, failed }));
      rates.push(await second(queue, elapse, { count: 0, latencyMs: 0 }));
      // Each admission step judges the orders of the seconds before it: the releases not
      // failed are no orders to judge by (the rate holds), the failed ones are 100% failures.
      expect(rates.map((r) => Math.round(r * 1000) / 1000)).toEqual([20, 20, 20, 16, 12.8]);
    });

    it('one token counts at most one failure per order window, however often it is claimed and released failed', async () => {
      const { queue, elapse } = await setup({ admitRatePerSecond: 10 });
      const admitted = await queue.admit(); // 20 (the burst), evaluated with no orders: 10
      const orders = await Promise.all(admitted.slice(0, 12).map((a) => queue.claim(a.memberId, a.entryToken)));
      await elapse(10);
      for (const c of orders) expect(await queue.consume(c)).toBe(true);
      const shopper = admitted[12]!;
      for (let i = 0; i < 20; i++) {
        const claim = await queue.claim(shopper.memberId, shopper.entryToken);
        expect(await queue.release(claim, { failed: true })).toBe(true);
      }
      await elapse(SECOND);
      await queue.admit();
      // 1 failure in 13 orders (7.7%): healthy, + 20 / 25. Counted 20 times (20 of 32) it would be x0.8: 8.
      expect((await queue.controls()).admitRatePerSecond).toBeCloseTo(10.8, 9);
      // Once the window has passed, the same token failing again counts again (alone: 100%, x0.8).
      await elapse(4 * SECOND);
      const again = await queue.claim(shopper.memberId, shopper.entryToken);
      expect(await queue.release(again)).toBe(true);
      await elapse(SECOND);
      await queue.admit();
      expect((await queue.controls()).admitRatePerSecond).toBeCloseTo(10.8 * 0.8, 9);
    });

    it('release refuses a bad option with WaitgateConfigError, releasing nothing', async () => {
      const { queue } = await setup();
      const [admission] = await queue.admit();
      const claim = await queue.claim(admission!.memberId, admission!.entryToken);
      for (const bad of [{ failed: 'no' }, { fail: false }, null, 'failed']) {
        await expect(queue.release(claim, bad as never)).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
      }
      expect((await queue.stats()).claimed).toBe(1);
      expect(await queue.release(claim, { failed: false })).toBe(true);
      expect((await queue.stats()).claimed).toBe(0);
    });

    it('holds the rate while no order settles (paused, before an opening, nobody ordering)', async () => {
      const { queue, elapse } = await setup({ admitRatePerSecond: 5 });
      for (let i = 0; i < 3; i++) {
        await queue.admit(); // nobody claims
        await elapse(SECOND);
      }
      expect((await queue.controls()).admitRatePerSecond).toBe(5);
    });

    it('counts a lapsed lease once: its order settling late does not count again', async () => {
      const { queue, elapse } = await setup({ claimTtlSeconds: 0.5, admitRatePerSecond: 10 });
      const admitted = await queue.admit();
      const claims = await Promise.all(admitted.slice(0, 10).map((a) => queue.claim(a.memberId, a.entryToken)));
      await elapse(SECOND);
      await queue.admit(); // ten lapsed leases: 100% failed, x0.8
      expect((await queue.controls()).admitRatePerSecond).toBe(8);
      // Once the failures have left the window (2 to 4 s), the late orders commit (nobody
      // took their lapsed leases over): not counted again, so there is nothing to judge by and
      // the rate holds (counted, their 5 s latency would halve it).
      await elapse(4 * SECOND);
      for (const c of claims) expect(await queue.consume(c)).toBe(true);
      await queue.admit();
      expect((await queue.controls()).admitRatePerSecond).toBe(8);
    });

    it('counts a lease that lapsed (an order neither committed nor rolled back in time) as a failure', async () => {
      const { queue, elapse } = await setup({ claimTtlSeconds: 0.5 });
      const admitted = await queue.admit(); // 20, evaluated with no orders yet
      await Promise.all(admitted.slice(0, 3).map((a) => queue.claim(a.memberId, a.entryToken))); // never settled
      await elapse(SECOND);
      await queue.admit(); // reaps the three lapsed leases, then evaluates
      expect((await queue.controls()).admitRatePerSecond).toBe(16);
    });

    it('is one rate for every instance: another instance reads it and admits at it', async () => {
      const { queue, make, elapse } = await setup();
      const other = make({ admitRatePerSecond: 5 }); // its own starting rate does not matter once one is in force
      await second(queue, elapse, { count: 3, latencyMs: 400 });
      await second(queue, elapse, { count: 3, latencyMs: 400 });
      const mine = await queue.controls();
      expect((await other.controls()).admitRatePerSecond).toBe(mine.admitRatePerSecond);
      expect((await other.stats()).admitRatePerSecond).toBe(mine.admitRatePerSecond);
      expect(mine.admitRatePerSecond).toBe(10);
    });

    it('an operator can still pin a rate (adaptive admission waits meanwhile) or pause; null gives the rate back to it', async () => {
      const { queue, elapse } = await setup();
      await queue.setControls({ admitRatePerSecond: 7 });
      expect(await second(queue, elapse, { count: 3, latencyMs: 400 })).toBe(7);
      expect(await second(queue, elapse, { count: 3, latencyMs: 400 })).toBe(7);
      await queue.setControls({ admitRatePerSecond: null });
      // Back to the law, from where it stood (20: it did not move while pinned), now with slow orders.
      expect(await second(queue, elapse, { count: 3, latencyMs: 400 })).toBe(10);
      await queue.setControls({ mode: 'paused' });
      expect(await queue.admit()).toEqual([]);
    });

    it("mode 'fixed' (the default) keeps admitRatePerSecond whatever the orders do", async () => {
      const { queue, elapse } = await setup({ admission: { mode: 'fixed' } });
      for (let i = 0; i < 2; i++) expect(await second(queue, elapse, { count: 3, latencyMs: 400 })).toBe(20);
      expect((await queue.stats()).admitRatePerSecond).toBe(20);
    });
  });
}
