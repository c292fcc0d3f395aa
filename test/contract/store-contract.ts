// The store contract: one suite, run unchanged against MemoryStore and RedisStore.
// Times use real, short TTLs through `elapse` (a fake clock jump in memory, a real
// sleep on Redis) and every rate bound is count-based.

import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { EntryTokenError, InvalidMemberIdError, WaitingQueue, type Store, type WaitingQueueOptions } from '../../src/index.js';
import { uniqueName } from '../support/unique.js';

export interface StoreHarness {
  /** A fresh store; `elapse` lets at least `ms` pass on the store's clock. */
  create(): Promise<{ store: Store; elapse(ms: number): Promise<void> }>;
  /**
   * The store is deliberately not atomic (test/support/racy-store.ts): every concurrency
   * test must then fail on an assertion, which shows it can catch operations that interleave.
   */
  nonAtomic?: boolean;
  /** Options every queue of the suite gets: `{ signing }` runs it with signed passes for tokens. */
  queueOptions?: Partial<WaitingQueueOptions>;
  /**
   * Run each suite's tests side by side. For stores on a real clock (Redis), whose tests mostly
   * sleep through TTLs and abandonment: every test has its own queue, so they cannot meet.
   */
  concurrent?: boolean;
}

export function describeStoreContract(label: string, harness: StoreHarness): void {
  async function setup(options: Partial<WaitingQueueOptions> = {}) {
    const { store, elapse } = await harness.create();
    const name = uniqueName('q');
    const make = (extra: Partial<WaitingQueueOptions> = {}) => new WaitingQueue({ store, name, ...harness.queueOptions, ...options, ...extra });
    return { store, elapse, queue: make(), make };
  }

  async function admitted(queue: WaitingQueue, member: string) {
    await queue.enter(member);
    const [admission] = await queue.admit();
    expect(admission?.memberId).toBe(member);
    return admission!;
  }

  async function expectTokenError(promise: Promise<unknown>, code: string) {
    const error = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EntryTokenError);
    expect((error as EntryTokenError).code).toBe(code);
  }

  /** A test of concurrent calls: it passes on an atomic store, and must fail on a non-atomic one. */
  function concurrent(name: string, test: () => Promise<void>) {
    if (!harness.nonAtomic) return it(name, test);
    return it(`${name} (must fail on this non-atomic store)`, async () => {
      const error = await test().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, 'the concurrency test passed on a store whose operations interleave').toMatchObject({ name: 'AssertionError' });
    });
  }

  describe(`store contract: ${label}`, { concurrent: harness.concurrent }, () => {
    describe('enter', () => {
      it('puts the first member at rank 0 of 1, the second at rank 1', async () => {
        const { queue } = await setup();
        expect(await queue.enter('alice')).toEqual({
          status: 'WAITING',
          rank: 0,
          currentTotalWaitingCount: 1,
          estimatedWaitSeconds: 1, // the head waits for the next admission step: never 0
          pollingIntervalSeconds: 1,
          entryToken: null,
          entryTokenExpiresAt: null,
          queueMode: 'open',
          message: null,
          opensAt: null,
          stockLeft: null,
          likelyServed: null,
        });
        const bob = await queue.enter('bob');
        expect([bob.status, bob.rank, bob.currentTotalWaitingCount]).toEqual(['WAITING', 1, 2]);
      });

      it('keeps the rank and the total when a member enters again', async () => {
        const { queue } = await setup();
        await queue.enter('alice');
        await queue.enter('bob');
        await queue.enter('carol');
        const again = await queue.enter('bob');
        expect([again.rank, again.currentTotalWaitingCount]).toEqual([1, 3]);
        expect((await queue.position('bob')).rank).toBe(1);
      });

      it('treats a number and its decimal string as the same member', async () => {
        const { queue } = await setup();
        await queue.enter(42);
        const again = await queue.enter('42');
        expect([again.rank, again.currentTotalWaitingCount]).toEqual([0, 1]);
      });

      it('returns READY and does not requeue a member holding a token', async () => {
        const { queue } = await setup();
        const admission = await admitted(queue, 'alice');
        const again = await queue.enter('alice');
        expect(again.status).toBe('READY');
        expect(again.entryToken).toBe(admission.entryToken);
        expect(again.currentTotalWaitingCount).toBe(0);
        expect((await queue.stats()).waiting).toBe(0);
      });

      concurrent('makes exactly one entry of 200 concurrent enters of one member, who keeps one rank while others join', async () => {
        const { queue } = await setup();
        await queue.enter('first');
        // 'same' enters 200 times among 100 other members entering: alone in the line, a member
        // re-added on each enter would still be at rank 0; here it would move back behind the others.
        const ids = Array.from({ length: 300 }, (_, i) => (i % 3 === 2 ? `other${i}` : 'same'));
        const results = await Promise.all(ids.map((id) => queue.enter(id)));
        const ranks = new Set(results.filter((_, i) => ids[i] === 'same').map((r) => r.rank));
        expect(ranks.size).toBe(1);
        expect(await queue.position('same')).toMatchObject({ status: 'WAITING', rank: [...ranks][0] });
        expect((await queue.stats()).waiting).toBe(102);
      });

      concurrent('gives 1,000 concurrent distinct members the ranks 0…999, each once', async () => {
        const { queue } = await setup();
        const results = await Promise.all(Array.from({ length: 1000 }, (_, i) => queue.enter(`m${i}`)));
        const ranks = results.map((r) => r.rank!).sort((a, b) => a - b);
        expect(ranks).toEqual(Array.from({ length: 1000 }, (_, i) => i));
        expect((await queue.stats()).waiting).toBe(1000);
      });
    });

    describe('admit', () => {
      it('admits exactly the bucket (50 of 120), the first 50 in entry order, then only what refilled', async () => {
        const { queue, elapse } = await setup({ admitRatePerSecond: 50 });
        for (let i = 0; i < 120; i++) await queue.enter(`m${i}`);

        // From before the first step: the bucket empties somewhere inside that call (after its
        // store round trip, and before the passes are signed when signing is on), so the time
        // from here to the second step's answer bounds what can have refilled, however slow
        // the machine.
        const startedAt = Date.now();
        const first = await queue.admit();
        expect(first.map((a) => a.memberId)).toEqual(Array.from({ length: 50 }, (_, i) => `m${i}`));

        const second = await queue.admit();
        const elapsedMs = Date.now() - startedAt;
        // Only what refilled in the meantime: 50/s over the few ms between the calls.
        expect(second.length).toBeLessThanOrEqual(Math.floor((elapsedMs * 50) / 1000) + 1);

        await elapse(1100);
        const third = await queue.admit();
        expect(third.length).toBe(50);
        const admittedIds = [...first, ...second, ...third].map((a) => a.memberId);
        expect(admittedIds).toEqual(Array.from({ length: admittedIds.length }, (_, i) => `m${i}`));
        expect((await queue.stats()).waiting).toBe(120 - admittedIds.length);
      });

      it('admits nothing from an empty queue and keeps the bucket full for later', async () => {
        const { queue } = await setup({ admitRatePerSecond: 5 });
        expect(await queue.admit()).toEqual([]);
        for (let i = 0; i < 8; i++) await queue.enter(`m${i}`);
        expect((await queue.admit()).length).toBe(5);
      });

      it('issues distinct 43-character base64url tokens (the jti of a signed pass) with a common expiry', async () => {
        const { queue } = await setup({ entryTokenTtlSeconds: 120 });
        for (let i = 0; i < 10; i++) await queue.enter(`m${i}`);
        const before = Date.now();
        const admissions = await queue.admit();
        expect(admissions).toHaveLength(10);
        expect(new Set(admissions.map((a) => a.entryToken)).size).toBe(10);
        for (const a of admissions) {
          const token = harness.queueOptions?.signing ? (decodeJwt(a.entryToken).jti as string) : a.entryToken;
          expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
          expect(a.expiresAt).toBeGreaterThanOrEqual(before + 110_000);
          expect(a.expiresAt).toBeLessThanOrEqual(Date.now() + 130_000);
        }
      });

      concurrent('keeps the global rate across two WaitingQueue instances admitting concurrently', async () => {
        const { make } = await setup();
        const rate = 40;
        const burst = 20;
        const [a, b] = [make({ admitRatePerSecond: rate, admitBurst: burst }), make({ admitRatePerSecond: rate, admitBurst: burst })];
        for (let i = 0; i < 400; i++) await a.enter(`m${i}`);
        const startedAt = Date.now();
        const counts = [0, 0];
        await Promise.all(
          [a, b].map(async (queue, i) => {
            while (Date.now() - startedAt < 3000) {
              counts[i]! += (await queue.admit()).length;
              await new Promise((r) => setTimeout(r, 5));
            }
          }),
        );
        const elapsedSeconds = (Date.now() - startedAt) / 1000;
        const total = counts[0]! + counts[1]!;
        expect(total).toBeLessThanOrEqual(Math.ceil(rate * elapsedSeconds + burst));
        // Both instances really drew from the one bucket.
        expect(total).toBeGreaterThanOrEqual(burst + rate * 2);
      });

      it('caps READY+CLAIMED at maxActive; consuming one lets exactly one more in', async () => {
        const { queue } = await setup({ admitRatePerSecond: 1000, admitBurst: 100, maxActive: 10 });
        for (let i = 0; i < 30; i++) await queue.enter(`m${i}`);
        const first = await queue.admit();
        expect(first).toHaveLength(10);
        expect(await queue.admit()).toHaveLength(0);
        const claim = await queue.claim(first[0]!.memberId, first[0]!.entryToken);
        expect(await queue.admit()).toHaveLength(0);
        expect((await queue.stats()).active).toBe(10);
        expect(await queue.consume(claim)).toBe(true);
        const next = await queue.admit();
        expect(next.map((a) => a.memberId)).toEqual(['m10']);
        expect(await queue.admit()).toHaveLength(0);
        expect(await queue.stats()).toMatchObject({ waiting: 19, active: 10 });
      });

      it('emits admitted with member ids and expiries, never tokens', async () => {
        const { queue } = await setup();
        const events: unknown[] = [];
        queue.on('admitted', (members) => events.push(members));
        await queue.enter('alice');
        await queue.enter('bob');
        const admissions = await queue.admit();
        expect(events).toEqual([admissions.map(({ memberId, expiresAt }) => ({ memberId, expiresAt, waitedSeconds: expect.any(Number) }))]);
        const text = JSON.stringify(events);
        for (const a of admissions) expect(text).not.toContain(a.entryToken);
      });
    });

    describe('position', () => {
      it('carries the token and its expiry when READY', async () => {
        const { queue } = await setup();
        const admission = await admitted(queue, 'alice');
        const position = await queue.position('alice');
        expect(position).toMatchObject({
          status: 'READY',
          rank: null,
          estimatedWaitSeconds: null,
          entryToken: admission.entryToken,
          entryTokenExpiresAt: admission.expiresAt,
        });
        expect(await queue.state('alice')).toBe('READY');
        expect(await queue.token('alice')).toEqual({ entryToken: admission.entryToken, expiresAt: admission.expiresAt });
      });

      it('answers NOT_ENTERED for a stranger and changes nothing', async () => {
        const { queue } = await setup();
        await queue.enter('alice');
        expect(await queue.position('stranger')).toMatchObject({ status: 'NOT_ENTERED', rank: null, currentTotalWaitingCount: 1, entryToken: null });
        expect(await queue.token('stranger')).toBeNull();
        expect((await queue.stats()).waiting).toBe(1);
      });

      it('estimates the wait and the polling interval from the rank (rank 500 -> 10 s, every 3 s)', async () => {
        const { queue } = await setup();
        await Promise.all(Array.from({ length: 501 }, (_, i) => queue.enter(`m${String(i).padStart(4, '0')}`)));
        const atRank = async (rank: number) => {
          for (let i = 0; i <= 500; i++) {
            const p = await queue.position(`m${String(i).padStart(4, '0')}`);
            if (p.rank === rank) return p;
          }
          throw new Error(`nobody at rank ${rank}`);
        };
        expect(await atRank(500)).toMatchObject({ estimatedWaitSeconds: 10, pollingIntervalSeconds: 3 });
        expect(await atRank(50)).toMatchObject({ estimatedWaitSeconds: 1, pollingIntervalSeconds: 1 });
      });
    });

    describe('claim, consume, release', () => {
      concurrent('lets exactly one of 50 concurrent claims win; the other 49 are IN_USE', async () => {
        const { queue } = await setup();
        const { entryToken } = await admitted(queue, 'alice');
        const results = await Promise.allSettled(Array.from({ length: 50 }, () => queue.claim('alice', entryToken)));
        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(49);
        for (const r of lost) expect((r.reason as EntryTokenError).code).toBe('IN_USE');
      });

      it('keeps a claimed member READY, and release makes the token claimable again', async () => {
        const { queue } = await setup();
        const { entryToken } = await admitted(queue, 'alice');
        const claim = await queue.claim('alice', entryToken);
        expect(await queue.state('alice')).toBe('READY');
        expect((await queue.stats()).claimed).toBe(1);
        expect(await queue.release(claim)).toBe(true);
        expect((await queue.stats()).claimed).toBe(0);
        const again = await queue.claim('alice', entryToken);
        expect(again.claimId).not.toBe(claim.claimId);
        expect(again.tokenId).toBe(claim.tokenId);
      });

      it('consume ends the entry: NOT_ENTERED, the token INVALID, a repeated consume true', async () => {
        const { queue } = await setup();
        const { entryToken } = await admitted(queue, 'alice');
        const claim = await queue.claim('alice', entryToken);
        expect(await queue.consume(claim)).toBe(true);
        expect(await queue.state('alice')).toBe('NOT_ENTERED');
        await expectTokenError(queue.claim('alice', entryToken), 'INVALID');
        expect(await queue.consume(claim)).toBe(true);
        expect(await queue.release(claim)).toBe(false);
        expect((await queue.stats()).active).toBe(0);
      });

      it('gives a stable tokenId per token that is not the token', async () => {
        const { queue } = await setup();
        const { entryToken } = await admitted(queue, 'alice');
        const claim = await queue.claim('alice', entryToken);
        expect(claim.tokenId).not.toBe(entryToken);
        expect(entryToken).not.toContain(claim.tokenId);
        expect(claim.tokenId).toMatch(/^[0-9a-f]{32}$/);
        await queue.release(claim);
        expect((await queue.claim('alice', entryToken)).tokenId).toBe(claim.tokenId);
      });

      it("refuses another member's token as INVALID and an empty one as MISSING", async () => {
        const { queue } = await setup();
        await queue.enter('alice');
        await queue.enter('bob');
        const [alice] = await queue.admit();
        await expectTokenError(queue.claim('bob', alice!.entryToken), 'INVALID');
        await expectTokenError(queue.claim('alice', ''), 'MISSING');
        await expectTokenError(queue.claim('alice', undefined), 'MISSING');
        await expectTokenError(queue.claim('alice', 'x'.repeat(43)), 'INVALID');
        await expectTokenError(queue.claim('alice', `${alice!.entryToken}A`), 'INVALID');
        await expectTokenError(queue.claim('carol', alice!.entryToken), 'INVALID');
        expect((await queue.claim('alice', alice!.entryToken)).memberId).toBe('alice');
      });

      it('never puts the token in an error message', async () => {
        const { queue } = await setup();
        const { entryToken } = await admitted(queue, 'alice');
        await queue.claim('alice', entryToken);
        const error = (await queue.claim('alice', entryToken).catch((e: unknown) => e)) as Error;
        expect(error.message).not.toContain(entryToken);
        const wrong = (await queue.claim('bob', entryToken).catch((e: unknown) => e)) as Error;
        expect(wrong.message).not.toContain(entryToken);
      });
    });

    describe('time', () => {
      it('expires an unused token: INVALID, and the member is NOT_ENTERED', async () => {
        const { queue, elapse } = await setup({ entryTokenTtlSeconds: 1 });
        const { entryToken } = await admitted(queue, 'alice');
        await elapse(1200);
        expect(await queue.position('alice')).toMatchObject({ status: 'NOT_ENTERED', entryToken: null });
        await expectTokenError(queue.claim('alice', entryToken), 'INVALID');
        expect((await queue.stats()).active).toBe(0);
      });

      it('lets a member whose token expired unused join again at the back', async () => {
        const { queue, elapse } = await setup({ entryTokenTtlSeconds: 1 });
        await admitted(queue, 'alice');
        await queue.enter('bob');
        await elapse(1200);
        expect(await queue.enter('alice')).toMatchObject({ status: 'WAITING', rank: 1, currentTotalWaitingCount: 2 });
      });

      it('lets a member whose order was consumed join again at the back', async () => {
        const { queue } = await setup();
        const { entryToken } = await admitted(queue, 'alice');
        await queue.enter('bob');
        await queue.consume(await queue.claim('alice', entryToken));
        expect(await queue.enter('alice')).toMatchObject({ status: 'WAITING', rank: 1 });
      });

      it('makes a token claimable again when its lease lapses; the lapsed claim then cannot consume', async () => {
        const { queue, elapse } = await setup({ claimTtlSeconds: 1 });
        const { entryToken } = await admitted(queue, 'alice');
        const lapsed = await queue.claim('alice', entryToken);
        await expectTokenError(queue.claim('alice', entryToken), 'IN_USE');
        await elapse(1200);
        const takeover = await queue.claim('alice', entryToken);
        expect(await queue.consume(lapsed)).toBe(false);
        expect(await queue.release(lapsed)).toBe(false);
        expect(await queue.consume(takeover)).toBe(true);
      });

      it('still consumes with a lapsed claim that nobody took over', async () => {
        const { queue, elapse } = await setup({ claimTtlSeconds: 1 });
        const { entryToken } = await admitted(queue, 'alice');
        const claim = await queue.claim('alice', entryToken);
        await elapse(1200);
        expect(await queue.consume(claim)).toBe(true);
        expect(await queue.state('alice')).toBe('NOT_ENTERED');
      });

      it('keeps a claimed token alive past its TTL until the lease ends', async () => {
        const { queue, elapse } = await setup({ entryTokenTtlSeconds: 1, claimTtlSeconds: 3 });
        const { entryToken } = await admitted(queue, 'alice');
        const claim = await queue.claim('alice', entryToken);
        await elapse(1300);
        expect(await queue.state('alice')).toBe('READY');
        expect((await queue.stats()).active).toBe(1);
        expect(await queue.consume(claim)).toBe(true);
      });

      it('lets an expired token be refused by consume when the lease and TTL both ended', async () => {
        const { queue, elapse } = await setup({ entryTokenTtlSeconds: 1, claimTtlSeconds: 1 });
        const { entryToken } = await admitted(queue, 'alice');
        const claim = await queue.claim('alice', entryToken);
        await elapse(1300);
        expect(await queue.consume(claim)).toBe(false);
        expect(await queue.state('alice')).toBe('NOT_ENTERED');
      });

      it('counts an expired token out of maxActive, so the next member gets in', async () => {
        const { queue, elapse } = await setup({ maxActive: 1, entryTokenTtlSeconds: 1, admitRatePerSecond: 100 });
        await queue.enter('alice');
        await queue.enter('bob');
        expect((await queue.admit()).map((a) => a.memberId)).toEqual(['alice']);
        expect(await queue.admit()).toEqual([]);
        await elapse(1200);
        expect((await queue.admit()).map((a) => a.memberId)).toEqual(['bob']);
      });
    });

    describe('leave and stats', () => {
      it('removes a waiting member; the ones behind move up', async () => {
        const { queue } = await setup();
        await queue.enter('alice');
        await queue.enter('bob');
        await queue.enter('carol');
        expect(await queue.leave('bob')).toBe(true);
        expect(await queue.leave('bob')).toBe(false);
        expect(await queue.position('carol')).toMatchObject({ rank: 1, currentTotalWaitingCount: 2 });
        expect(await queue.state('bob')).toBe('NOT_ENTERED');
      });

      it('drops a READY member’s token; an in-flight claim of it can no longer consume', async () => {
        const { queue } = await setup();
        const { entryToken } = await admitted(queue, 'alice');
        const claim = await queue.claim('alice', entryToken);
        expect(await queue.leave('alice')).toBe(true);
        expect(await queue.state('alice')).toBe('NOT_ENTERED');
        expect(await queue.consume(claim)).toBe(false);
        await expectTokenError(queue.claim('alice', entryToken), 'INVALID');
      });

      it('counts waiting, active and claimed members as they are', async () => {
        const { queue } = await setup({ admitRatePerSecond: 3 });
        for (let i = 0; i < 5; i++) await queue.enter(`m${i}`);
        expect(await queue.stats()).toEqual({
          waiting: 5,
          active: 0,
          claimed: 0,
          admittedPerSecond: 0,
          admitRatePerSecond: 3,
          abandoned: 0,
          totals: { entered: 5, admitted: 0, abandoned: 0, consumed: 0, expired: 0, shadowed: 0 },
          waitSeconds: { p50: 0, p90: 0, max: 0, count: 0 },
        });
        const admissions = await queue.admit();
        await queue.claim(admissions[0]!.memberId, admissions[0]!.entryToken);
        const stats = await queue.stats();
        expect(stats).toMatchObject({ waiting: 2, active: 3, claimed: 1 });
        expect(stats.admittedPerSecond).toBeGreaterThan(0);
        expect(stats.admittedPerSecond).toBeLessThanOrEqual(3);
      });

      it('keeps queues of one store apart', async () => {
        const { store } = await harness.create();
        const a = new WaitingQueue({ store, name: uniqueName('a') });
        const b = new WaitingQueue({ store, name: uniqueName('b') });
        await a.enter('alice');
        expect(await b.position('alice')).toMatchObject({ status: 'NOT_ENTERED', currentTotalWaitingCount: 0 });
        expect(await b.admit()).toEqual([]);
      });
    });

    // Thousands of members: alone, not beside the suite's other tests (StoreHarness.concurrent).
    describe('position cache (polling at scale)', { sequential: true }, () => {
      async function pair(options: Partial<WaitingQueueOptions> = {}) {
        const { store, elapse } = await harness.create();
        const name = uniqueName('q');
        const calls = new Map<string, number>();
        const lookedUp: string[] = []; // member ids of exact position() calls, in order
        const counted = new Proxy(store, {
          get(target, prop, receiver) {
            const value = Reflect.get(target, prop, receiver) as unknown;
            if (typeof value !== 'function') return value;
            return (...args: unknown[]) => {
              if (prop !== 'warnings') calls.set(String(prop), (calls.get(String(prop)) ?? 0) + 1);
              if (prop === 'position') lookedUp.push(String(args[1]));
              return (value as (...a: unknown[]) => unknown).apply(target, args);
            };
          },
        });
        const cached = new WaitingQueue({ store: counted, name, positionCache: { refreshMs: 50 }, ...options });
        const exact = new WaitingQueue({ store, name, ...options, positionCache: false }); // every poll one store call
        const storeCalls = () => [...calls.values()].reduce((a, b) => a + b, 0);
        return { store, name, cached, exact, elapse, storeCalls, calls: (method: string) => calls.get(method) ?? 0, lookedUp };
      }

      const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `m${from + i}`);

      /** Runs `f` over `items`, `chunk` at a time concurrently (a real Redis pipelines them). */
      async function inChunks<T, R>(items: readonly T[], f: (item: T) => Promise<R>, chunk = 250): Promise<R[]> {
        const out: R[] = [];
        for (let i = 0; i < items.length; i += chunk) out.push(...(await Promise.all(items.slice(i, i + chunk).map(f))));
        return out;
      }

      it('answers the exact rank and total while nobody leaves, with store calls only for members below exactBelowRank', async () => {
        const { cached, exact, calls, lookedUp } = await pair({
          pollingIntervals: [{ belowRank: 10, seconds: 1 }, { belowRank: 100, seconds: 3 }, { seconds: 5 }],
        });
        expect(cached.config.positionCache!.exactBelowRank).toBe(100); // the largest tier belowRank
        for (const id of ids(0, 150)) await exact.enter(id);
        for (const id of ids(0, 150)) await cached.position(id); // learn each member's sequence once
        const [lookupsBefore, snapshotsBefore, started] = [lookedUp.length, calls('queueSnapshot'), performance.now()];
        for (let round = 0; round < 5; round++) {
          for (const id of ids(0, 150)) {
            const [c, e] = [await cached.position(id), await exact.position(id)];
            expect(c).toEqual(e);
          }
        }
        // Ranks 0-99: one exact lookup per poll; ranks 100-149: none, only snapshot refreshes (every 50 ms at most).
        expect(lookedUp.slice(lookupsBefore)).toEqual(Array.from({ length: 5 }, () => ids(0, 100)).flat());
        expect(calls('queueSnapshot') - snapshotsBefore).toBeLessThanOrEqual(Math.ceil((performance.now() - started) / 50) + 1);
      });

      it('shows READY on the very next poll after another instance admits, while the snapshot is still fresh (default exactBelowRank)', async () => {
        // Default exactBelowRank: max(first tier's 2, ceil(1.25 × (burst 8 + 0.01/s × 60 s))) = 11 >= the 8 one admit() can take.
        const { cached, exact, calls } = await pair({
          admitRatePerSecond: 0.01,
          admitBurst: 8,
          pollingIntervals: [{ belowRank: 2, seconds: 1 }, { seconds: 5 }],
          positionCache: { refreshMs: 60_000 },
        });
        expect(cached.config.positionCache!.exactBelowRank).toBe(11);
        for (const id of ids(0, 30)) await exact.enter(id);
        for (const id of ids(0, 30)) await cached.position(id); // learn (exact)
        for (const id of ids(0, 30)) expect((await cached.position(id)).rank).toBe(Number(id.slice(1))); // ranks 11+ estimated: one snapshot
        expect(calls('queueSnapshot')).toBe(1);

        const admitted = await exact.admit(); // another instance admits the head
        expect(admitted.map((a) => a.memberId)).toEqual(ids(0, 8));
        for (const id of ids(0, 11)) expect(await cached.position(id)).toEqual(await exact.position(id)); // READY at once; ranks exact
        for (const [i, a] of admitted.entries()) expect(await cached.token(`m${i}`)).toEqual({ entryToken: a.entryToken, expiresAt: a.expiresAt });
        for (const id of ids(11, 30)) expect((await cached.position(id)).status).toBe('WAITING'); // estimated from the old snapshot
        expect(calls('queueSnapshot')).toBe(1); // the snapshot never aged: only exactBelowRank explains the READY
      });

      it('with exactBelowRank 0, a member admitted elsewhere is told WAITING until the snapshot ages (the trade)', async () => {
        const { cached, exact } = await pair({ admitBurst: 1, positionCache: { refreshMs: 60_000, exactBelowRank: 0 } });
        for (const id of ids(0, 3)) await cached.enter(id);
        await cached.position('m0'); // takes the snapshot
        expect((await exact.admit()).map((a) => a.memberId)).toEqual(['m0']);
        expect(await cached.position('m0')).toMatchObject({ status: 'WAITING', rank: 0 });
        expect((await exact.position('m0')).status).toBe('READY');
      });

      it('keeps the statuses of the exact path (WAITING, READY, NOT_ENTERED) for a mixed set of members', async () => {
        // refreshMs 60 s: the snapshot taken below never ages in this test.
        const { cached, exact } = await pair({ admitRatePerSecond: 0.01, admitBurst: 5, positionCache: { refreshMs: 60_000, exactBelowRank: 100 } });
        for (const id of ids(0, 150)) await cached.enter(id);
        expect(await cached.leave('m120')).toBe(true); // left through this instance
        for (const id of ids(0, 150)) await cached.position(id); // takes the snapshot; ranks 100+ estimated from now on

        const admitted = await exact.admit(); // elsewhere: m0-m4 admitted
        expect(admitted.map((a) => a.memberId)).toEqual(ids(0, 5));
        const claim = await exact.claim('m0', admitted[0]!.entryToken);
        expect(await exact.consume(claim)).toBe(true); // m0: order done
        await exact.claim('m1', admitted[1]!.entryToken); // m1: order in flight
        expect(await exact.leave('m2')).toBe(true); // m2: dropped its token elsewhere
        expect(await exact.leave('m10')).toBe(true); // m10: left the line elsewhere, near the head
        await exact.enter('late'); // joined elsewhere

        const members = [...ids(0, 150), 'late', 'stranger'];
        const statuses = { cached: [] as string[], exact: [] as string[] };
        for (const id of members) {
          const [c, e] = [await cached.position(id), await exact.position(id)];
          statuses.cached.push(`${id}:${c.status}`);
          statuses.exact.push(`${id}:${e.status}`);
          if (c.rank === null || c.rank < 100)
            expect(c).toEqual(e); // looked up exactly
          else expect(e.rank).toBeLessThanOrEqual(c.rank); // estimated from the old snapshot: the line only moved forward since
        }
        expect(statuses.cached).toEqual(statuses.exact);
        const count = (status: string) => statuses.exact.filter((s) => s.endsWith(`:${status}`)).length;
        expect([count('WAITING'), count('READY'), count('NOT_ENTERED')]).toEqual([144, 3, 5]);
      });

      it('answers ranks below exactBelowRank exactly after members ahead leave', async () => {
        const { cached, exact } = await pair({ positionCache: { refreshMs: 10, exactBelowRank: 100 } });
        for (const id of ids(0, 300)) await exact.enter(id);
        for (const id of ids(0, 300)) await cached.position(id); // learn
        // Unevenly, all between the first two rank probes (0 and 64, now m104), so interpolation misleads there.
        for (const id of ids(20, 60)) await exact.leave(id);
        await new Promise((r) => setTimeout(r, 20)); // let the snapshot age out
        let exactAnswers = 0;
        for (const id of [...ids(0, 20), ...ids(60, 300)]) {
          const [c, e] = [await cached.position(id), await exact.position(id)];
          if (c.rank! < 100 || e.rank! < 100) {
            expect(c).toEqual(e); // without exactBelowRank: m60 (rank 20) estimated at 37 (60 × 64/104)
            exactAnswers++;
          } else {
            expect(c.status).toBe('WAITING');
          }
        }
        expect(exactAnswers).toBeGreaterThanOrEqual(100);
      });

      it('never reports an estimate above the last exact answer, and stays monotonic across the switch to exact', async () => {
        const { cached, exact } = await pair({ admitRatePerSecond: 1000, admitBurst: 5, positionCache: { refreshMs: 10, exactBelowRank: 20 } });
        for (const id of ids(0, 60)) await exact.enter(id);
        for (const id of ids(5, 25)) await exact.leave(id); // 20 leavers ahead of m50, before it is learned
        expect((await cached.position('m50')).rank).toBe(30); // exact: it learns the sequence and the rank
        await new Promise((r) => setTimeout(r, 20));
        // The estimate, 50 × 39/59 ≈ 33, would move m50 back: it is held at 30.
        expect((await cached.position('m50')).rank).toBe(30);
        let last = 30;
        let exactSeen = false;
        for (let step = 0; step < 6; step++) {
          await exact.admit(); // 5 at a time from the head
          await new Promise((r) => setTimeout(r, 20));
          const [c, e] = [await cached.position('m50'), await exact.position('m50')];
          expect(c.rank).toBeLessThanOrEqual(last);
          if (c.rank! < 20) {
            expect(c).toEqual(e);
            exactSeen = true;
          }
          last = c.rank!;
        }
        expect(exactSeen).toBe(true);
      });

      it('estimates ranks closely when members ahead leave, and never moves a member back', async () => {
        const { cached, exact } = await pair({ admitRatePerSecond: 1000, admitBurst: 20, positionCache: { refreshMs: 50, exactBelowRank: 100 } });
        for (let i = 0; i < 300; i++) await exact.enter(`m${i}`);
        await cached.position('m299');
        let last = Number.POSITIVE_INFINITY;
        for (let step = 0; step < 30; step++) {
          await exact.leave(`m${step * 9 + 3}`); // leavers spread along the line
          if (step % 10 === 0) await exact.admit();
          await exact.enter(`late${step}`); // newcomers join behind
          await new Promise((r) => setTimeout(r, 60)); // let the snapshot age out
          const estimated = (await cached.position('m299')).rank!;
          const truth = (await exact.position('m299')).rank!;
          expect(estimated).toBeLessThanOrEqual(last);
          expect(Math.abs(estimated - truth)).toBeLessThanOrEqual(3);
          last = estimated;
        }
      });

      it("snapshots carry rank probes: ranks 0, 64, 128, 256, ... below the last, and the last, each with its member's sequence", async () => {
        const { store, name, exact } = await pair();
        const probesOf = async () => (await store.queueSnapshot!(name)).probes;
        const seqAt = async (rank: number) => {
          for (const id of ids(0, 300)) {
            const s = await store.position(name, id);
            if (s.status === 'WAITING' && s.rank === rank) return s.score;
          }
          throw new Error(`nobody at rank ${rank}`);
        };
        expect(await probesOf()).toEqual([]);
        await exact.enter('m0');
        expect((await probesOf())!.map((p) => p.rank)).toEqual([0]);
        await inChunks(ids(1, 65), (id) => exact.enter(id)); // 65 waiting: the last is rank 64
        expect((await probesOf())!.map((p) => p.rank)).toEqual([0, 64]);
        await exact.enter('m65');
        expect((await probesOf())!.map((p) => p.rank)).toEqual([0, 64, 65]);
        await inChunks(ids(66, 300), (id) => exact.enter(id));
        await inChunks(ids(10, 30), (id) => exact.leave(id)); // a gap: probes are ranks, not sequences
        const probes = (await probesOf())!;
        expect(probes.map((p) => p.rank)).toEqual([0, 64, 128, 256, 279]);
        for (const p of probes) expect(p.seq).toBe(await seqAt(p.rank));
      });

      it('interpolates between rank probes: members who left unevenly skew only their own segment of the line', async () => {
        // 3,000 waiting; 40% of ranks 100-599 leave (200 members, now between ranks 100 and 400), nobody else.
        // Interpolating between head and last alone (density 2,799/2,999) would put rank 1,000 at about 1,120 (12% off).
        const { cached, exact } = await pair({ admitRatePerSecond: 0.01, admitBurst: 1, positionCache: { refreshMs: 10, exactBelowRank: 50 } });
        const all = ids(0, 3000);
        await inChunks(all, (id) => exact.enter(id));
        const learned = new Map((await inChunks(all, (id) => cached.position(id))).map((p, i) => [all[i]!, p.rank!])); // exact: learns each sequence
        const byRank = all.slice().sort((a, b) => learned.get(a)! - learned.get(b)!);
        const leavers = new Set(byRank.slice(100, 600).filter((_, i) => i % 5 < 2));
        await inChunks([...leavers], (id) => exact.leave(id)); // through another instance: this one knows nothing
        await new Promise((r) => setTimeout(r, 20)); // let the snapshot age out

        const stayers = all.filter((id) => !leavers.has(id));
        const [c, e] = [await inChunks(stayers, (id) => cached.position(id)), await inChunks(stayers, (id) => exact.position(id))];
        let worstFrom1000 = 0;
        for (const [i, truth] of e.entries()) {
          const got = c[i]!;
          expect(got.status).toBe('WAITING');
          expect(got.currentTotalWaitingCount).toBe(2800);
          // Never moved back: at most the rank this instance reported before the leaves.
          expect(got.rank!).toBeLessThanOrEqual(learned.get(stayers[i]!)!);
          if (truth.rank! < 50) expect(got).toEqual(truth); // below exactBelowRank: looked up
          // From probe rank 512 on no segment holds a leaver: exact, as if nobody had left.
          if (truth.rank! >= 512) expect(got.rank).toBe(truth.rank);
          // Elsewhere the error is bounded by the leavers of the member's segment (at most 40% of its length).
          else expect(Math.abs(got.rank! - truth.rank!)).toBeLessThanOrEqual(Math.ceil(0.4 * Math.max(64, truth.rank!)));
          if (truth.rank! >= 1000) worstFrom1000 = Math.max(worstFrom1000, Math.abs(got.rank! - truth.rank!) / truth.rank!);
        }
        expect(worstFrom1000).toBeLessThanOrEqual(0.01); // the target: within 1% from rank 1,000 (the default exactBelowRank) on
      });
    });

    describe('bad input', () => {
      const bad: Array<[string, unknown]> = [
        ['an empty string', ''],
        ['129 characters', 'x'.repeat(129)],
        ['a newline', 'a\nb'],
        ['a NUL', 'a\u0000b'],
        ['DEL', 'a\u007f'],
        ['a negative number', -1],
        ['a fraction', 1.5],
        ['NaN', Number.NaN],
        ['an unsafe integer', 2 ** 53],
        ['an object', { id: 1 }],
        ['an array', ['a']],
        ['null', null],
        ['undefined', undefined],
        ['a boolean', true],
      ];
      it.each(bad)('throws InvalidMemberIdError for %s, in every method, before the store', async (_label, memberId) => {
        const { store, queue } = await setup();
        const calls = new Set<string>();
        const spy = new Proxy(store, {
          get(target, prop, receiver) {
            const value = Reflect.get(target, prop, receiver) as unknown;
            if (typeof value !== 'function') return value;
            return (...args: unknown[]) => {
              calls.add(String(prop));
              return (value as (...a: unknown[]) => unknown).apply(target, args);
            };
          },
        });
        const q = new WaitingQueue({ store: spy, name: queue.name });
        const id = memberId as string;
        for (const call of [
          () => q.enter(id),
          () => q.position(id),
          () => q.state(id),
          () => q.token(id),
          () => q.leave(id),
          () => q.claim(id, 'x'.repeat(43)),
        ]) {
          await expect(call()).rejects.toBeInstanceOf(InvalidMemberIdError);
        }
        expect([...calls].filter((c) => c !== 'warnings')).toEqual([]);
      });

      it('accepts 128 characters, unicode, and characters that mean something to Redis', async () => {
        const { queue } = await setup();
        for (const id of ['x'.repeat(128), 'ünïcødé-✓', '{braces}', 'a:b:c', '*?[glob]', 'with space', '0', 0, Number.MAX_SAFE_INTEGER]) {
          expect((await queue.enter(id)).status).toBe('WAITING');
          expect((await queue.position(id)).status).toBe('WAITING');
        }
      });
    });
  });
}
