// The invite codes and lanes contract (SPEC §17): one suite, run unchanged against
// MemoryStore and RedisStore. A code is spent exactly as often as it may be, by the enter
// that joins, in one atomic step; lanes share each admission step by their shares, carry
// the fraction between steps, and a member's rank counts its own lane and never grows.

import { describe, expect, it } from 'vitest';
import { CodeInvalidError, WaitgateConfigError, WaitingQueue, type WaitingQueueOptions } from '../../src/index.js';
import type { StoreHarness } from './store-contract.js';
import { uniqueName } from '../support/unique.js';

export function describeLanesContract(label: string, harness: StoreHarness): void {
  /** A full bucket at every step (`step()`: a millisecond passes, then admit): each admits `burst` members while enough wait. */
  async function setup(options: Partial<WaitingQueueOptions> = {}) {
    const { store, elapse } = await harness.create();
    const name = uniqueName('l');
    const make = (more: Partial<WaitingQueueOptions> = {}) =>
      new WaitingQueue({
        store,
        name,
        admitRatePerSecond: 1_000_000,
        admitBurst: 7,
        abandonAfterSeconds: null,
        lanes: [{ name: 'vip', share: 0.3 }],
        ...options,
        ...more,
      });
    const queue = make();
    const step = async () => {
      await elapse(2);
      return queue.admit();
    };
    return { queue, make, step, elapse };
  }

  async function enterAll(queue: WaitingQueue, members: readonly string[], code?: string) {
    for (let i = 0; i < members.length; i += 100) {
      await Promise.all(members.slice(i, i + 100).map((m) => (code === undefined ? queue.enter(m) : queue.enter(m, { code }))));
    }
  }

  const ids = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}`);

  describe(`lanes contract: ${label}`, { concurrent: harness.concurrent }, () => {
    it('a valid code joins its lane: the rank counts the members ahead in that lane only', async () => {
      const { queue } = await setup();
      await enterAll(queue, ['a', 'b', 'c']);
      expect(await queue.addCodes('vip', ['GOLD-1', 'GOLD-2'])).toBe(2);
      const vip = await queue.enter('v', { code: 'GOLD-1' });
      expect(vip).toMatchObject({ status: 'WAITING', rank: 0, currentTotalWaitingCount: 4 });
      expect(await queue.position('c')).toMatchObject({ status: 'WAITING', rank: 2, currentTotalWaitingCount: 4 });
      expect(await queue.position('v')).toMatchObject({ status: 'WAITING', rank: 0, currentTotalWaitingCount: 4 });
      const stats = await queue.stats();
      expect(stats.waiting).toBe(4);
      expect(stats.lanes).toEqual([
        { name: 'default', share: 0.7, waiting: 3, codeUsesLeft: null },
        { name: 'vip', share: 0.3, waiting: 1, codeUsesLeft: 1 },
      ]);
      expect(await queue.inspect('v')).toMatchObject({ status: 'WAITING', rank: 0, totalWaiting: 4 });
      // A member of a lane leaves like anyone.
      expect(await queue.leave('v')).toBe(true);
      expect(await queue.position('v')).toMatchObject({ status: 'NOT_ENTERED' });
    });

    it('an unknown or spent code is CODE_INVALID (403) and writes nothing', async () => {
      const { queue } = await setup();
      const unknown = await queue.enter('x', { code: 'NOPE' }).catch((e: unknown) => e);
      expect(unknown).toBeInstanceOf(CodeInvalidError);
      expect(unknown).toMatchObject({ code: 'CODE_INVALID', statusCode: 403 });
      expect(await queue.position('x')).toMatchObject({ status: 'NOT_ENTERED' });
      expect((await queue.stats()).totals.entered).toBe(0);
      await queue.addCodes('vip', ['ONCE']);
      await queue.enter('first', { code: 'ONCE' });
      await expect(queue.enter('second', { code: 'ONCE' })).rejects.toBeInstanceOf(CodeInvalidError);
      await expect(queue.enter('third', { code: 'not a code!' })).rejects.toBeInstanceOf(CodeInvalidError);
      expect(await queue.position('second')).toMatchObject({ status: 'NOT_ENTERED' });
      const stats = await queue.stats();
      expect(stats.totals.entered).toBe(1);
      expect(stats.lanes![1]).toMatchObject({ waiting: 1, codeUsesLeft: 0 });
    });

    it('a member already placed who enters again with its code keeps its place and spends nothing', async () => {
      const { queue } = await setup();
      await queue.addCodes('vip', ['TWICE'], { uses: 2 });
      await queue.enter('a', { code: 'TWICE' });
      expect(await queue.enter('a', { code: 'TWICE' })).toMatchObject({ status: 'WAITING', rank: 0 });
      await queue.enter('plain');
      expect(await queue.enter('plain', { code: 'TWICE' })).toMatchObject({ status: 'WAITING', rank: 0 }); // stays in the default lane
      expect(await queue.enter('b', { code: 'TWICE' })).toMatchObject({ status: 'WAITING', rank: 1 });
      await expect(queue.enter('c', { code: 'TWICE' })).rejects.toBeInstanceOf(CodeInvalidError);
      // Re-adding a stored code restores no use.
      expect(await queue.addCodes('vip', ['TWICE'], { uses: 5 })).toBe(0);
      await expect(queue.enter('c', { code: 'TWICE' })).rejects.toBeInstanceOf(CodeInvalidError);
    });

    it('a code is spent exactly `uses` times under 200 concurrent attempts, from several instances', async () => {
      const { make } = await setup();
      const queues = [make(), make(), make(), make()];
      await queues[0]!.addCodes('vip', ['CROWD'], { uses: 37 });
      // 150 members, 50 of them trying twice at once: 200 attempts.
      const members = [...ids('m', 150), ...ids('m', 50)];
      const results = await Promise.all(members.map((m, i) => queues[i % queues.length]!.enter(m, { code: 'CROWD' }).catch((e: unknown) => e)));
      const refused = results.filter((r) => r instanceof CodeInvalidError).length;
      const placed = new Set(members.filter((_, i) => !(results[i] instanceof Error)));
      expect(results.filter((r) => r instanceof Error && !(r instanceof CodeInvalidError))).toEqual([]);
      expect(placed.size).toBe(37);
      expect(refused).toBeGreaterThanOrEqual(200 - 37 - 50);
      const stats = await queues[0]!.stats();
      expect(stats.lanes![1]).toMatchObject({ waiting: 37, codeUsesLeft: 0 });
      expect(stats.totals.entered).toBe(37);
      const ranks = await Promise.all([...placed].map(async (m) => (await queues[1]!.position(m)).rank));
      expect(ranks.sort((x, y) => x! - y!)).toEqual(Array.from({ length: 37 }, (_, i) => i));
    });

    it('lanes share every admission step within one member, and exactly over 100 steps', async () => {
      const { queue, step } = await setup();
      await queue.addCodes('vip', ['MANY'], { uses: 1000 });
      await enterAll(queue, ids('d', 800));
      await enterAll(queue, ids('v', 800), 'MANY');
      let vipTotal = 0;
      for (let i = 0; i < 100; i++) {
        const admitted = await step();
        expect(admitted).toHaveLength(7);
        const vip = admitted.filter((a) => a.memberId.startsWith('v')).length;
        expect(Math.abs(vip - 7 * 0.3)).toBeLessThanOrEqual(1);
        vipTotal += vip;
      }
      expect(vipTotal).toBe(210);
      // Within each lane, first come first served.
      expect((await queue.position('v210')).rank).toBe(0);
      expect((await queue.position('d490')).rank).toBe(0);
    });

    it("a lane's unused share goes to the others", async () => {
      const { queue, step } = await setup();
      await queue.addCodes('vip', ['FEW'], { uses: 100 });
      await enterAll(queue, ids('d', 20));
      const defaultOnly = await step(); // nobody in the vip lane: the default lane takes the whole step
      expect(defaultOnly.map((a) => a.memberId)).toEqual(ids('d', 7));
      await enterAll(queue, ids('v', 20), 'FEW');
      const mixed = await step(); // 2.1 owed to vip: 2, the default lane the other 5
      expect(mixed.map((a) => a.memberId).sort()).toEqual(['d10', 'd11', 'd7', 'd8', 'd9', 'v0', 'v1']);
      await step(); // d12 .. d16, v2 v3 (carry 0.2)
      const short = await step(); // 3 default members left: vip takes the 4 places they leave
      expect(short.map((a) => a.memberId).sort()).toEqual(['d17', 'd18', 'd19', 'v4', 'v5', 'v6', 'v7']);
      const onlyVip = await step();
      expect(onlyVip.map((a) => a.memberId)).toEqual(['v8', 'v9', 'v10', 'v11', 'v12', 'v13', 'v14']);
    });

    it('no waiting member ever sees its rank grow, whatever the lanes and arrivals', async () => {
      const { queue, step } = await setup({
        admitBurst: 3,
        lanes: [
          { name: 'vip', share: 0.3 },
          { name: 'press', share: 0.2 },
        ],
      });
      await queue.addCodes('vip', ['V'], { uses: 1000 });
      await queue.addCodes('press', ['P'], { uses: 1000 });
      const lastRank = new Map<string, number>();
      let n = 0;
      for (let i = 0; i < 40; i++) {
        // Arrivals in every lane between steps.
        const arrivals = [queue.enter(`d${n}`), queue.enter(`v${n}`, { code: 'V' }), queue.enter(`p${n}`, { code: 'P' })];
        if (i % 3 === 0) arrivals.push(queue.enter(`d${n}b`));
        await Promise.all(arrivals);
        n++;
        await step();
        for (const member of [...lastRank.keys(), `d${n - 1}`, `v${n - 1}`, `p${n - 1}`]) {
          const p = await queue.position(member);
          if (p.status !== 'WAITING') {
            lastRank.delete(member);
            continue;
          }
          const before = lastRank.get(member);
          if (before !== undefined) expect(p.rank, `${member} at step ${i}`).toBeLessThanOrEqual(before);
          lastRank.set(member, p.rank!);
        }
      }
      expect(lastRank.size).toBeGreaterThan(10); // the line grew: members were followed to the end
    });

    it('presence works in a lane: at its turn a silent lane member is dropped as abandoned, one that polls is admitted', async () => {
      const { queue, step, elapse } = await setup({ abandonAfterSeconds: 5, pollingIntervals: [{ seconds: 1 }] });
      await queue.addCodes('vip', ['P'], { uses: 2 });
      await queue.enter('silent', { code: 'P' });
      await queue.enter('live', { code: 'P' });
      await elapse(4000);
      await queue.position('live'); // a sign of life near the head of its lane
      await elapse(1500);
      const admitted = await step();
      expect(admitted.map((a) => a.memberId)).toEqual(['live']);
      expect(await queue.position('silent')).toMatchObject({ status: 'NOT_ENTERED' });
      expect((await queue.stats()).abandoned).toBe(1);
    });

    it("a member's estimate uses its lane's share of the rate", async () => {
      const { queue } = await setup({ admitRatePerSecond: 10, admitBurst: 10, lanes: [{ name: 'vip', share: 0.25 }] });
      await queue.addCodes('vip', ['E'], { uses: 100 });
      await enterAll(queue, ids('d', 21));
      await enterAll(queue, ids('v', 21), 'E');
      // Rank 20: 20 / (0.25 × 10) = 8 s in the vip lane, 20 / (0.75 × 10) → 3 s in the default one.
      expect(await queue.position('v20')).toMatchObject({ rank: 20, estimatedWaitSeconds: 8 });
      expect(await queue.position('d20')).toMatchObject({ rank: 20, estimatedWaitSeconds: 3 });
    });

    it('addCodes refuses a lane the options do not declare, and bad codes, before any store call', async () => {
      const { queue } = await setup();
      await expect(queue.addCodes('gold', ['A'])).rejects.toBeInstanceOf(WaitgateConfigError);
      await expect(queue.addCodes('vip', ['bad code'])).rejects.toBeInstanceOf(WaitgateConfigError);
      await expect(queue.addCodes('vip', ['A'], { uses: 0 })).rejects.toBeInstanceOf(WaitgateConfigError);
      expect((await queue.stats()).lanes).toBeUndefined();
    });
  });
}
