// The always-on contract (SPEC §18): the safety net and the audit trail, one suite run
// unchanged against MemoryStore and RedisStore.

import { describe, expect, it, vi } from 'vitest';
import { WaitgateConfigError, WaitingQueue, type Store, type WaitingQueueOptions } from '../../src/index.js';
import { CONTROLS_LOG_CAP } from '../../src/controls-log.js';
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

  describe(`always-on contract: ${label}`, { concurrent: harness.concurrent }, () => {
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
      const { queue, elapse } = await setup();
      const statuses = [];
      for (const m of ['a', 'b', 'c', 'd', 'e']) statuses.push((await queue.enter(m)).status);
      // The burst of 3 lets three in at once; the rest wait, in order.
      expect(statuses).toEqual(['READY', 'READY', 'READY', 'WAITING', 'WAITING']);
      expect(await queue.position('e')).toMatchObject({ status: 'WAITING', rank: 1 });
      await queue.setControls({ admitRatePerSecond: 1000, admitBurst: 10 });
      await elapse(50); // the bucket refills at the new rate
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
    it('the log records every change with its actor, patch and version, newest first, the draw commitment included', async () => {
      const { queue } = await setup();
      await queue.setControls({ mode: 'paused', message: 'Back soon' }, { actor: 'alice' });
      await queue.setControls({ admitRatePerSecond: 5 });
      await queue.setControls({ admitRatePerSecond: 5 }, { actor: 'carol' }); // changes nothing: not a change
      const now = Date.now();
      const scheduled = await queue.setControls({ opensAt: now + 3_600_000, shuffle: true }, { actor: 'bob' });
      const log = await queue.controlsLog();
      expect(log).toEqual([
        { at: expect.any(Number), actor: 'bob', patch: { opensAt: now + 3_600_000, shuffle: true }, version: 3, drawCommitment: scheduled.drawCommitment },
        { at: expect.any(Number), actor: null, patch: { admitRatePerSecond: 5 }, version: 2 },
        { at: expect.any(Number), actor: 'alice', patch: { mode: 'paused', message: 'Back soon' }, version: 1 },
      ]);
      expect(log[0]!.at).toBeGreaterThanOrEqual(log[2]!.at);
      expect(await queue.controlsLog({ limit: 1 })).toHaveLength(1);
      await expect(queue.controlsLog({ limit: 0 })).rejects.toBeInstanceOf(WaitgateConfigError);
      await expect(queue.setControls({ mode: 'open' }, { actor: '' })).rejects.toBeInstanceOf(WaitgateConfigError);
    });

    it('the log stays capped, and a sale that sells out records its own closing', async () => {
      const { queue } = await setup();
      for (let i = 0; i < CONTROLS_LOG_CAP + 5; i++) await queue.setControls({ message: `m${i}` }, { actor: 'ops' });
      const log = await queue.controlsLog({ limit: CONTROLS_LOG_CAP });
      expect(log).toHaveLength(CONTROLS_LOG_CAP);
      const version = (await queue.controls()).version;
      expect(log[0]!.version).toBe(version);
      expect(log.at(-1)!.version).toBe(version - CONTROLS_LOG_CAP + 1);
      await queue.setControls({ stock: 1, mode: 'open' });
      const a = await queue.enter('buyer');
      expect(a.status).toBe('READY');
      expect(await queue.consume(await queue.claim('buyer', a.entryToken))).toBe(true);
      const [closing] = await queue.controlsLog({ limit: 1 });
      expect(closing).toMatchObject({ actor: 'waitgate:stock', patch: { mode: 'closed', message: 'Sold out' }, version: (await queue.controls()).version });
    });

    it('a queue with limits keeps them in the store: a writer without them is refused, nothing written', async () => {
      const { make } = await setup();
      const guarded = make({ limits: { maxRatePerSecond: 100, maxActive: 50 } });
      const other = make(); // as the command or another app: no limits of its own
      // The limits are written as the guarded queue starts: keeping them is not a change.
      expect(await guarded.controlsLog()).toEqual([]);
      await vi.waitFor(async () => {
        const error = await other.setControls({ admitRatePerSecond: 101 }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(WaitgateConfigError);
        expect((error as WaitgateConfigError).message).toContain('admitRatePerSecond');
      });
      await expect(other.setControls({ maxActive: null })).rejects.toThrow(/maxActive/);
      await expect(other.setControls({ maxActive: 51, mode: 'paused' })).rejects.toThrow(/maxActive/);
      expect(await other.controls()).toMatchObject({ version: 0, mode: 'open' });
      expect(await other.controlsLog()).toEqual([]);
      expect(await other.setControls({ admitRatePerSecond: 100, maxActive: 50 }, { actor: 'ops' })).toMatchObject({ version: 1 });
    });
  });
}
