// The queue-wide figures and the operator's reads (SPEC §9): totals since the queue
// began, the wait of recent admissions, the events of each transition and `inspect`.
// One suite, run unchanged against MemoryStore, RedisStore, a Cluster and the
// least-privilege ACL user, so the stores agree. Time moves through the harness's
// `elapse` (a fake clock jump in memory, a real sleep on Redis).

import { describe, expect, it } from 'vitest';
import { WaitingQueue, type WaitingQueueEvents, type WaitingQueueOptions } from '../../src/index.js';
import type { StoreHarness } from './store-contract.js';
import { uniqueName } from '../support/unique.js';

type Recorded = Array<[keyof WaitingQueueEvents, unknown]>;

/** Every transition event of `queue`, in order. */
function record(queue: WaitingQueue): Recorded {
  const events: Recorded = [];
  for (const name of ['entered', 'admitted', 'abandoned', 'claimed', 'consumed', 'released', 'left', 'controls'] as const) {
    queue.on(name, (payload: unknown) => events.push([name, payload]));
  }
  return events;
}

export function describeFiguresContract(label: string, harness: StoreHarness): void {
  async function setup(options: Partial<WaitingQueueOptions> = {}) {
    const { store, elapse } = await harness.create();
    const name = uniqueName('fig');
    const make = (extra: Partial<WaitingQueueOptions> = {}) => new WaitingQueue({ store, name, ...options, ...extra });
    return { store, elapse, queue: make(), make };
  }

  describe(`figures contract: ${label}`, { concurrent: harness.concurrent }, () => {
    it('counts every transition once, queue-wide: two instances read the same totals', async () => {
      const { queue, make, elapse } = await setup({ admitRatePerSecond: 4, admitBurst: 4, entryTokenTtlSeconds: 1 });
      const other = make();
      for (const m of ['a', 'b', 'c']) await queue.enter(m);
      for (const m of ['d', 'e', 'f']) await other.enter(m);
      await queue.enter('a'); // a repeated enter is not a new entry
      expect(await other.leave('f')).toBe(true);
      const admitted = await queue.admit(); // a b c d
      expect(admitted.map((x) => x.memberId)).toEqual(['a', 'b', 'c', 'd']);
      const claimA = await other.claim('a', admitted[0]!.entryToken);
      const claimB = await queue.claim('b', admitted[1]!.entryToken);
      expect(await other.consume(claimA)).toBe(true);
      expect(await other.consume(claimA)).toBe(true); // a repeat answers true, and is not counted again
      expect(await queue.consume(claimB)).toBe(true);
      // c and d never order: their 1 s tokens expire, counted when the store reaps them.
      await elapse(1200);
      await other.admit(); // e
      const expected = { entered: 6, admitted: 5, abandoned: 0, consumed: 2, expired: 2, shadowed: 0 };
      const [mine, theirs] = await Promise.all([queue.stats(), other.stats()]);
      expect(mine.totals).toEqual(expected);
      expect(theirs.totals).toEqual(expected);
      expect(theirs.waitSeconds).toEqual(mine.waitSeconds);
      expect(mine.waitSeconds.count).toBe(5);
    });

    it('emits each transition on the instance that made it, never with a token or a claim id', async () => {
      const { queue, make } = await setup({ admitRatePerSecond: 5, admitBurst: 5 });
      const other = make();
      const here = record(queue);
      const there = record(other);
      await queue.enter('alice');
      await queue.enter('alice'); // no second `entered`
      await queue.enter('bob');
      await other.enter('carol');
      const admissions = await queue.admit();
      const claim = await queue.claim('alice', admissions[0]!.entryToken);
      expect(await queue.release(claim)).toBe(true);
      const again = await queue.claim('alice', admissions[0]!.entryToken);
      expect(await queue.consume(again)).toBe(true);
      expect(await other.leave('bob')).toBe(true);
      expect(await other.leave('nobody')).toBe(false); // not a transition: no event
      await other.setControls({ message: 'hello' });

      expect(here.map(([name]) => name)).toEqual(['entered', 'entered', 'admitted', 'claimed', 'released', 'claimed', 'consumed']);
      expect(here[0]![1]).toEqual({ memberId: 'alice', status: 'WAITING' });
      expect(here[3]![1]).toEqual({ memberId: 'alice', tokenId: claim.tokenId, expiresAt: claim.expiresAt });
      expect(here[6]![1]).toEqual({ memberId: 'alice', tokenId: again.tokenId });
      expect(there.map(([name]) => name)).toEqual(['entered', 'left', 'controls']);
      expect(there[1]![1]).toEqual({ memberId: 'bob' });
      const text = JSON.stringify([here, there]);
      for (const a of admissions) expect(text).not.toContain(a.entryToken);
      expect(text).not.toContain(claim.claimId);
      expect(text).not.toContain(again.claimId);
    });

    it('announces a member let through in passthrough as entered READY, admitted at once (wait 0)', async () => {
      const { queue } = await setup();
      const events = record(queue);
      await queue.setControls({ mode: 'passthrough' });
      expect((await queue.enter('alice')).status).toBe('READY');
      expect(events.filter(([name]) => name === 'entered').map(([, payload]) => payload)).toEqual([{ memberId: 'alice', status: 'READY' }]);
      const stats = await queue.stats();
      expect(stats.totals).toMatchObject({ entered: 1, admitted: 1 });
      expect(stats.waitSeconds).toEqual({ p50: 0, p90: 0, max: 0, count: 1 });
    });

    it('measures each admitted member’s wait from its entry, to within a second; the figures cover the last 10 minutes', async () => {
      const { queue, elapse } = await setup({ admitRatePerSecond: 10, admitBurst: 10 });
      const waited = new Map<string, number | null>();
      queue.on('admitted', (members) => members.forEach((m) => waited.set(m.memberId, m.waitedSeconds)));
      await queue.enter('early');
      await elapse(2100);
      await queue.enter('late');
      await elapse(1100);
      await queue.admit();
      // early waited about 3.2 s, late about 1.1 s (late's entry checkpoint is its own: 2.1 s after early's).
      expect(waited.get('early')).toBeGreaterThanOrEqual(3.2);
      expect(waited.get('early')).toBeLessThan(3.2 + 1.5);
      expect(waited.get('late')).toBeGreaterThanOrEqual(1.1);
      expect(waited.get('late')).toBeLessThan(1.1 + 1.5);
      const { waitSeconds } = await queue.stats();
      expect(waitSeconds.count).toBe(2);
      expect(waitSeconds.max).toBe(waited.get('early'));
      // Nearest rank from 19%-wide bins: p50 is late's bin, p90 early's (at most 9% off, never above max).
      expect(Math.abs(waitSeconds.p50 - waited.get('late')!) / waited.get('late')!).toBeLessThanOrEqual(0.1);
      expect(Math.abs(waitSeconds.p90 - waited.get('early')!) / waited.get('early')!).toBeLessThanOrEqual(0.1);
      expect(waitSeconds.p90).toBeLessThanOrEqual(waitSeconds.max);
    });

    it('measures a pre-queue place from the opening, not from its early entry', async () => {
      const { queue, elapse } = await setup({ admitRatePerSecond: 10, admitBurst: 10 });
      const { now } = await queue.inspect('nobody'); // the store's clock
      await queue.setControls({ opensAt: now + 1500, shuffle: true });
      const waited = new Map<string, number | null>();
      queue.on('admitted', (members) => members.forEach((m) => waited.set(m.memberId, m.waitedSeconds)));
      await queue.enter('early-bird');
      await elapse(2500); // 1 s after the opening
      await queue.enter('after-opening');
      await queue.admit();
      expect(waited.get('early-bird')).toBeGreaterThanOrEqual(0.9);
      expect(waited.get('early-bird')).toBeLessThan(2.2); // not the 2.5 s since its entry plus the admit
      expect(waited.get('after-opening')).toBeLessThan(1);
    });

    it('inspects a member without its token and without side effects', async () => {
      const { queue, elapse } = await setup({
        admitRatePerSecond: 1,
        admitBurst: 1,
        pollingIntervals: [{ seconds: 1 }],
        abandonAfterSeconds: 5,
        pickupTimeoutSeconds: 5,
      });
      await queue.enter('alice');
      await queue.enter('bob');
      expect(await queue.inspect('carol')).toMatchObject({ memberId: 'carol', status: 'NOT_ENTERED', rank: null, totalWaiting: 2 });
      const [admission] = await queue.admit();
      const ready = await queue.inspect('alice');
      expect(ready).toMatchObject({ memberId: 'alice', status: 'READY', rank: null, tokenExpiresAt: admission!.expiresAt, leaseExpiresAt: null });
      expect(ready.pickupBy).toBeGreaterThan(ready.now);
      expect(JSON.stringify(ready)).not.toContain(admission!.entryToken);
      // Inspecting is no pick-up: the deadline stays.
      expect((await queue.inspect('alice')).pickupBy).toBe(ready.pickupBy);

      const waiting = await queue.inspect('bob');
      expect(waiting).toMatchObject({ status: 'WAITING', rank: 0, totalWaiting: 1, tokenExpiresAt: null });
      expect(waiting.lastSeenAt).not.toBeNull(); // its enter was a sign of life
      await elapse(50);
      // Inspecting is no sign of life: the last one stays.
      expect((await queue.inspect('bob')).lastSeenAt).toBe(waiting.lastSeenAt);

      const claim = await queue.claim('alice', admission!.entryToken);
      const claimed = await queue.inspect('alice');
      expect(claimed).toMatchObject({ status: 'CLAIMED', leaseExpiresAt: claim.expiresAt, pickupBy: null });
      expect(JSON.stringify(claimed)).not.toContain(claim.claimId);
    });
  });
}
