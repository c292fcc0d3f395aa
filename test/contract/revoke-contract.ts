// Revoking a member's pass (SPEC §15): one suite, run unchanged against MemoryStore and RedisStore.

import { describe, expect, it } from 'vitest';
import { WaitingQueue } from '../../src/index.js';
import { signingWith } from '../support/signing-keys.js';
import { uniqueName } from '../support/unique.js';
import type { StoreHarness } from './store-contract.js';

export function describeRevokeContract(label: string, harness: StoreHarness): void {
  describe(`${label}: revoke`, { concurrent: harness.concurrent }, () => {
    async function setup() {
      const { store, elapse } = await harness.create();
      return { store, elapse, queue: new WaitingQueue({ store, name: uniqueName('r'), signing: signingWith() }) };
    }

    it('drops the token, records when, and an in-flight claim no longer consumes', async () => {
      const { queue } = await setup();
      await queue.enter('alice');
      await queue.enter('bob');
      await queue.admit();
      const alice = (await queue.token('alice'))!.entryToken;
      const claim = await queue.claim('bob', (await queue.token('bob'))!.entryToken);
      expect(await queue.revokedAt('alice')).toBeNull();
      const before = Date.now();
      expect(await queue.revoke('alice')).toBe(true);
      expect(await queue.revoke('bob')).toBe(true);
      const at = (await queue.revokedAt('alice'))!;
      expect(at).toBeGreaterThanOrEqual(before - 1000);
      expect(at).toBeLessThanOrEqual(Date.now() + 1000);
      expect((await queue.position('alice')).status).toBe('NOT_ENTERED');
      await expect(queue.claim('alice', alice)).rejects.toMatchObject({ code: 'INVALID' });
      expect(await queue.consume(claim)).toBe(false);
      expect(await queue.revokedAt('carol')).toBeNull();
    });

    it('is safe to repeat, and answers false for a member without a token; a repeat records a later moment', async () => {
      const { queue, elapse } = await setup();
      expect(await queue.revoke('nobody')).toBe(false);
      const first = (await queue.revokedAt('nobody'))!;
      await elapse(20);
      expect(await queue.revoke('nobody')).toBe(false);
      expect(await queue.revokedAt('nobody')).toBeGreaterThan(first);
    });

    it('a member revoked may enter again and gets a new pass', async () => {
      const { queue } = await setup();
      await queue.enter('alice');
      await queue.admit();
      await queue.revoke('alice');
      await queue.enter('alice');
      await queue.admit();
      const again = (await queue.token('alice'))!.entryToken;
      expect(await queue.consume(await queue.claim('alice', again))).toBe(true);
    });
  });
}
