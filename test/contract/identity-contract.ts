// One place per identity (SPEC §17): one suite, run unchanged against MemoryStore and RedisStore.

import { describe, expect, it } from 'vitest';
import { IdentityLimitError, WaitgateConfigError, WaitingQueue, type WaitingQueueOptions } from '../../src/index.js';
import { uniqueName } from '../support/unique.js';
import type { StoreHarness } from './store-contract.js';

export function describeIdentityContract(label: string, harness: StoreHarness): void {
  describe(`${label}: one place per identity`, { concurrent: harness.concurrent }, () => {
    /** Two WaitingQueue objects on the same store and name: two app instances. */
    async function setup(options: Partial<WaitingQueueOptions> = {}) {
      const { store, elapse } = await harness.create();
      const name = uniqueName('i');
      const make = (more: Partial<WaitingQueueOptions> = {}) => new WaitingQueue({ store, name, ...options, ...more });
      return { queue: make(), other: make(), make, elapse };
    }

    async function refusal(promise: Promise<unknown>): Promise<unknown> {
      return promise.then(
        () => null,
        (e: unknown) => e,
      );
    }

    it('by default an identity holds one place: another member id of it is refused on any instance, and nothing is written', async () => {
      const { queue, other } = await setup();
      expect(await queue.enter('alice-1', { identity: 'alice@example.com' })).toMatchObject({ status: 'WAITING', rank: 0 });
      const before = await queue.stats();
      const error = await refusal(other.enter('alice-2', { identity: 'alice@example.com' }));
      expect(error).toBeInstanceOf(IdentityLimitError);
      expect(error).toMatchObject({ code: 'IDENTITY_LIMIT', statusCode: 409 });
      expect(await queue.position('alice-2')).toMatchObject({ status: 'NOT_ENTERED', rank: null });
      const after = await queue.stats();
      expect(after.totals.entered).toBe(before.totals.entered);
      expect(after.waiting).toBe(1);
      // Other identities and members without one are not affected.
      expect(await other.enter('bob', { identity: 'bob@example.com' })).toMatchObject({ status: 'WAITING', rank: 1 });
      expect(await other.enter('carol')).toMatchObject({ status: 'WAITING', rank: 2 });
    });

    it('the member that holds the place enters again as before (idempotent), with or without its identity', async () => {
      const { queue, other } = await setup();
      await queue.enter('x');
      await queue.enter('alice-1', { identity: 'alice' });
      expect(await other.enter('alice-1', { identity: 'alice' })).toMatchObject({ status: 'WAITING', rank: 1 });
      expect(await other.enter('alice-1')).toMatchObject({ status: 'WAITING', rank: 1 });
      // A member already waiting (entered without an identity) is not refused when it brings one.
      expect(await queue.enter('x', { identity: 'alice' })).toMatchObject({ status: 'WAITING', rank: 0 });
    });

    it('a member waiting in an invite lane holds its identity’s place; a refused member spends no code', async () => {
      const { queue, other } = await setup({ lanes: [{ name: 'vip', share: 0.5 }] });
      await queue.addCodes('vip', ['GOLD-1', 'GOLD-2']);
      expect(await queue.enter('alice-1', { identity: 'alice', code: 'GOLD-1' })).toMatchObject({ status: 'WAITING', rank: 0 });
      await expect(other.enter('alice-2', { identity: 'alice' })).rejects.toBeInstanceOf(IdentityLimitError);
      await expect(other.enter('alice-3', { identity: 'alice', code: 'GOLD-2' })).rejects.toBeInstanceOf(IdentityLimitError);
      const vip = (await queue.stats()).lanes!.find((lane) => lane.name === 'vip')!;
      expect(vip).toMatchObject({ waiting: 1, codeUsesLeft: 1 }); // GOLD-2 was not spent
      await queue.leave('alice-1');
      expect(await other.enter('alice-3', { identity: 'alice', code: 'GOLD-2' })).toMatchObject({ status: 'WAITING', rank: 0 });
    });

    it('a member holding a token holds the place; leaving, or using the token, frees it', async () => {
      const { queue, other } = await setup();
      await queue.enter('alice-1', { identity: 'alice' });
      await queue.enter('bob-1', { identity: 'bob' });
      expect((await queue.admit()).map((a) => a.memberId)).toEqual(['alice-1', 'bob-1']);
      // READY: still a place.
      await expect(other.enter('alice-2', { identity: 'alice' })).rejects.toBeInstanceOf(IdentityLimitError);
      const token = (await queue.token('alice-1'))!.entryToken;
      expect(await queue.consume(await queue.claim('alice-1', token))).toBe(true);
      expect(await other.enter('alice-2', { identity: 'alice' })).toMatchObject({ status: 'WAITING' });
      // Leaving frees it too.
      await expect(queue.enter('bob-2', { identity: 'bob' })).rejects.toBeInstanceOf(IdentityLimitError);
      expect(await queue.leave('bob-1')).toBe(true);
      await expect(queue.enter('bob-3', { identity: 'bob' })).resolves.toMatchObject({ status: 'WAITING' });
    });

    it('a token that expired unused frees the place', async () => {
      const { queue, other, elapse } = await setup({ entryTokenTtlSeconds: 0.05 });
      await queue.enter('alice-1', { identity: 'alice' });
      await queue.admit();
      await expect(other.enter('alice-2', { identity: 'alice' })).rejects.toBeInstanceOf(IdentityLimitError);
      await elapse(120);
      expect(await other.enter('alice-2', { identity: 'alice' })).toMatchObject({ status: 'WAITING', rank: 0 });
    });

    it('maxPlacesPerIdentity: 2 lets two member ids of an identity in and refuses the third', async () => {
      const { queue, other } = await setup({ maxPlacesPerIdentity: 2 });
      expect(queue.config.maxPlacesPerIdentity).toBe(2);
      await queue.enter('m1', { identity: 'family' });
      await other.enter('m2', { identity: 'family' });
      await expect(queue.enter('m3', { identity: 'family' })).rejects.toBeInstanceOf(IdentityLimitError);
      expect((await queue.stats()).waiting).toBe(2);
      await queue.leave('m1');
      expect(await queue.enter('m3', { identity: 'family' })).toMatchObject({ status: 'WAITING', rank: 1 });
    });

    it('enters of one identity at the same moment on two instances: exactly one takes the place', async () => {
      const { queue, other } = await setup();
      const ids = ['s0', 's1', 's2', 's3', 's4', 's5'];
      const results = await Promise.allSettled(ids.map((id, i) => (i % 2 ? other : queue).enter(id, { identity: 'same' })));
      const entered = results.filter((r) => r.status === 'fulfilled');
      expect(entered).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(IdentityLimitError);
      expect((await queue.stats()).waiting).toBe(1);
      // Members without an identity in the same batch are unaffected.
      const mixed = await Promise.all([queue.enter('free-1'), queue.enter('free-2'), refusal(queue.enter('s9', { identity: 'same' }))]);
      expect(mixed.slice(0, 2)).toMatchObject([{ status: 'WAITING' }, { status: 'WAITING' }]);
      expect(mixed[2]).toBeInstanceOf(IdentityLimitError);
    });

    it('in passthrough the first member of an identity is let through; another member id of it is refused', async () => {
      const { queue, other } = await setup();
      await queue.setControls({ mode: 'passthrough' });
      expect(await queue.enter('p1', { identity: 'pat' })).toMatchObject({ status: 'READY' });
      await expect(other.enter('p2', { identity: 'pat' })).rejects.toBeInstanceOf(IdentityLimitError);
      expect(await queue.position('p2')).toMatchObject({ status: 'NOT_ENTERED' });
    });

    it('a closed queue answers QUEUE_CLOSED, not IDENTITY_LIMIT', async () => {
      const { queue } = await setup();
      await queue.enter('c1', { identity: 'cat' });
      await queue.setControls({ mode: 'closed' });
      await expect(queue.enter('c2', { identity: 'cat' })).rejects.toMatchObject({ code: 'QUEUE_CLOSED' });
    });

    it('refuses a bad identity or an unknown enter option before any store call, and a bad maxPlacesPerIdentity at construction', async () => {
      const { queue, make } = await setup();
      for (const identity of ['', 'x'.repeat(1025), 42]) {
        await expect(queue.enter('m', { identity } as never)).rejects.toMatchObject({ code: 'CONFIG_INVALID', option: 'identity' });
      }
      await expect(queue.enter('m', { lane: 'vip' } as never)).rejects.toBeInstanceOf(WaitgateConfigError);
      expect(await queue.position('m')).toMatchObject({ status: 'NOT_ENTERED' });
      for (const maxPlacesPerIdentity of [0, 101, 1.5]) {
        expect(() => make({ maxPlacesPerIdentity })).toThrow(WaitgateConfigError);
      }
      expect(make().config.maxPlacesPerIdentity).toBe(1);
    });
  });
}
