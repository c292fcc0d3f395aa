// The auditable cohort contract (SPEC §17): one suite, run unchanged against MemoryStore,
// RedisStore, a Cluster and the least-privilege ACL user. The audit is recomputed by an
// independent verifier below that uses node:crypto only, none of our code.

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { WaitingQueue } from '../../src/index.js';
import type { StoreHarness } from './store-contract.js';
import { uniqueName } from '../support/unique.js';

/** What anyone can do with a published report: rebuild the chain and the draw order. */
function verify(report: { hashes: string[] }): { head: string; length: number; order: string[] } {
  const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');
  let head = '0'.repeat(40);
  for (const hash of report.hashes) head = sha1(head + hash);
  const drawScore = (hash: string) => parseInt(hash.slice(0, 10), 16);
  const order = [...report.hashes].sort((a, b) => drawScore(a) - drawScore(b) || (a < b ? -1 : 1));
  return { head, length: report.hashes.length, order };
}

/** A member's own salted hash, once the seed is out. */
const saltedHash = (seed: string, memberId: string) => createHash('sha1').update(`${seed}:${memberId}`).digest('hex');

export function describeCohortContract(label: string, harness: StoreHarness): void {
  describe(`cohort contract: ${label}`, { concurrent: harness.concurrent }, () => {
    it('folds each pre-queue entry into the chain, freezes it at the opening, and the report recomputes head, length and draw order', async () => {
      const { store, elapse } = await harness.create();
      const queue = new WaitingQueue({ store, name: uniqueName('k'), admitRatePerSecond: 10_000, admitBurst: 10_000 });
      await queue.enter('early'); // waiting before the schedule: not in the cohort
      // 8 s ahead: 220 enters on Redis fit in it even on a loaded machine, beside the suite's other tests.
      await queue.setControls({ opensAt: Date.now() + 8000, shuffle: true });
      const inOrder = Array.from({ length: 20 }, (_, i) => `p${i}`);
      const lengths: number[] = [];
      for (const m of inOrder.slice(0, 3)) {
        await queue.enter(m);
        lengths.push((await queue.drawReport()).length);
      }
      expect(lengths).toEqual([1, 2, 3]); // one link per entry
      for (const m of inOrder.slice(3)) await queue.enter(m);
      await queue.enter('p0'); // entering again is no new entry
      const crowd = Array.from({ length: 200 }, (_, i) => `c${i}`);
      await Promise.all(crowd.map((m) => queue.enter(m))); // batched enters (group commit)
      const before = await queue.drawReport();
      expect(before).toMatchObject({ seed: null, length: 220, hashes: [], order: [] }); // no draw score is told early
      expect(before.head).toMatch(/^[0-9a-f]{40}$/);
      expect((await queue.controls()).cohortCommitment).toBeNull(); // not frozen yet

      await elapse(8100);
      await queue.enter('after'); // after the opening: not in the cohort
      const report = await queue.drawReport();
      const controls = await queue.controls();
      expect(report).toMatchObject({ seed: controls.drawSeed, commitment: controls.drawCommitment, head: before.head, length: 220 });
      expect(controls.cohortCommitment).toEqual({ head: before.head, length: 220 }); // beside the seed commitment
      const seed = report.seed!;
      // The independent verifier agrees with the store's head, length and order.
      const recomputed = verify(report);
      expect(recomputed).toEqual({ head: report.head, length: report.length, order: report.order });
      // Entry order: the sequential entries first, in their order; then the crowd, in some order.
      expect(report.hashes.slice(0, 20)).toEqual(inOrder.map((m) => saltedHash(seed, m)));
      expect(new Set(report.hashes.slice(20))).toEqual(new Set(crowd.map((m) => saltedHash(seed, m))));
      // The line follows the draw the report shows.
      const admitted = (await queue.admit()).map((a) => a.memberId);
      expect(admitted[0]).toBe('early');
      expect(admitted.at(-1)).toBe('after');
      expect(admitted.slice(1, -1).map((m) => saltedHash(seed, m))).toEqual(recomputed.order);
      // A member checks its own entry: its salted hash, at its place in entry order.
      expect(report.hashes.indexOf(saltedHash(seed, 'p7'))).toBe(7);
      expect(report.hashes).not.toContain(saltedHash(seed, 'early'));
    });

    it('starts a new chain with a new draw: the next sale reports its own cohort, which its verifier accepts', async () => {
      const { store, elapse } = await harness.create();
      const queue = new WaitingQueue({ store, name: uniqueName('k'), admitRatePerSecond: 10_000, admitBurst: 10_000 });
      await queue.setControls({ opensAt: Date.now() + 1000, shuffle: true });
      await queue.enter('first-sale');
      await elapse(1100);
      expect((await queue.admit()).map((a) => a.memberId)).toEqual(['first-sale']); // nobody the first draw drew still waits
      // The next sale: a new shuffled opening, so a new seed (the store's clock may run ahead of Date.now()).
      await queue.setControls({ opensAt: Date.now() + 1500, shuffle: true });
      await queue.enter('second-sale');
      await elapse(1600);
      const report = await queue.drawReport();
      expect(report.seed).not.toBeNull();
      expect(report.hashes).toEqual([saltedHash(report.seed!, 'second-sale')]);
      expect(verify(report)).toEqual({ head: report.head, length: report.length, order: report.order });
      expect((await queue.controls()).cohortCommitment).toEqual({ head: report.head, length: 1 });
    });

    it('keeps no cohort without a draw', async () => {
      const { store, elapse } = await harness.create();
      const queue = new WaitingQueue({ store, name: uniqueName('k') });
      await queue.setControls({ opensAt: Date.now() + 1000 });
      await queue.enter('a');
      await elapse(1100);
      expect(await queue.drawReport()).toEqual({ seed: null, commitment: null, head: null, length: 0, hashes: [], order: [] });
    });
  });
}
