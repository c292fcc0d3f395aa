// positionCache against the exact path, on random walks of two app instances sharing one
// MemoryStore: one polls through the cache, the other enters, admits and lets members leave.
// (The same cache runs on RedisStore in the contract suite; the walk needs speed and a
// controllable clock, so it runs here on the memory store.)

import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore, WaitingQueue } from '../src/index.js';
import { storeWith } from './support/store-with.js';

const REFRESH_MS = 50;

type Step =
  | { kind: 'enter'; count: number; through: 'cached' | 'other' }
  | { kind: 'leave'; pick: number; through: 'cached' | 'other' }
  | { kind: 'admit'; through: 'cached' | 'other' }
  | { kind: 'poll'; pick: number; fresh: boolean }
  | { kind: 'pollAll'; fresh: boolean }
  | { kind: 'tick'; ms: number };

const through = fc.constantFrom<'cached' | 'other'>('cached', 'other');
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('enter' as const), count: fc.integer({ min: 1, max: 60 }), through }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('leave' as const), pick: fc.nat(), through }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('admit' as const), through }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('poll' as const), pick: fc.nat(), fresh: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('pollAll' as const), fresh: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 400 }) }) },
);

describe('positionCache on random walks (two instances, one store)', () => {
  // The cache ages its snapshot by performance.now(); faking it lets a step ask for a fresh one.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('answers the exact statuses and totals, ranks within the leavers of an exact one, and never moves a staying member back', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 40 }), fc.integer({ min: 0, max: 40 }), async (steps, exactBelowRank) => {
        let clock = 1_000_000;
        const store = new MemoryStore({ now: () => clock });
        const options = { store, name: 'walk', admitRatePerSecond: 20, admitBurst: 7 } as const;
        const cached = new WaitingQueue({ ...options, positionCache: { refreshMs: REFRESH_MS, exactBelowRank } });
        const other = new WaitingQueue(options);

        const members: string[] = [];
        // Members who left through the other instance: the cache cannot know, and answers
        // them from their old sequence (documented); they are left out of the comparisons.
        const leftElsewhere = new Set<string>();
        const lastRank = new Map<string, number>(); // last rank reported to a member who stayed waiting
        let leaves = 0;

        const poll = async (id: string, fresh: boolean) => {
          if (fresh) vi.advanceTimersByTime(REFRESH_MS + 1);
          const c = await cached.position(id);
          const e = await other.position(id);
          if (c.status === 'WAITING') {
            const previous = lastRank.get(id);
            if (previous !== undefined) expect(c.rank!).toBeLessThanOrEqual(previous);
            lastRank.set(id, c.rank!);
          } else {
            lastRank.delete(id);
          }
          if (leftElsewhere.has(id) || !fresh) return;
          expect(c.status).toBe(e.status);
          expect(c.currentTotalWaitingCount).toBe(e.currentTotalWaitingCount);
          expect(c.entryToken).toBe(e.entryToken);
          if (c.status !== 'WAITING') return;
          // A fresh snapshot is off only by how unevenly leavers spread: never by more than their number.
          expect(Math.abs(c.rank! - e.rank!)).toBeLessThanOrEqual(leaves);
          if (leaves === 0) expect(c.rank).toBe(e.rank);
        };

        for (const s of steps) {
          const queue = 'through' in s && s.through === 'cached' ? cached : other;
          if (s.kind === 'enter') {
            for (let i = 0; i < s.count; i++) {
              const id = `m${members.length}`;
              members.push(id);
              await queue.enter(id);
            }
          } else if (s.kind === 'leave' && members.length > 0) {
            const id = members[s.pick % members.length]!;
            if (await queue.leave(id)) leaves++;
            if (queue === other) leftElsewhere.add(id);
            lastRank.delete(id);
          } else if (s.kind === 'admit') {
            await queue.admit();
          } else if (s.kind === 'poll' && members.length > 0) {
            await poll(members[s.pick % members.length]!, s.fresh);
          } else if (s.kind === 'pollAll') {
            for (let i = 0; i < members.length; i++) await poll(members[i]!, s.fresh && i === 0);
          } else if (s.kind === 'tick') {
            clock += s.ms; // the store's clock: the bucket refills, tokens age
          }
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe('positionCache maxMembers', () => {
  /** A cached instance (every known member estimated, one snapshot for the whole test) and the members each exact lookup asked for. */
  async function cachedLine(maxMembers: number, members: number) {
    const store = new MemoryStore();
    const lookedUp: string[] = [];
    const counted = new Proxy(store, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (prop === 'position') lookedUp.push(String(args[1]));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const cached = new WaitingQueue({ store: counted, name: 'q', positionCache: { maxMembers, exactBelowRank: 0, refreshMs: 60_000 } });
    const other = new WaitingQueue({ store, name: 'q' }); // enters elsewhere: the cached instance knows nobody yet
    for (let i = 0; i < members; i++) await other.enter(`m${i}`);
    /** Polls through the cache; returns the members it had to look up in the store (those it had forgotten). */
    const poll = async (...ids: string[]) => {
      const from = lookedUp.length;
      for (const id of ids) expect((await cached.position(id)).status).toBe('WAITING');
      return lookedUp.slice(from);
    };
    return { poll };
  }

  it('remembers at most maxMembers: past it, the first learned are forgotten and cost a store call again', async () => {
    const { poll } = await cachedLine(3, 10);
    const all = Array.from({ length: 10 }, (_, i) => `m${i}`);
    expect(await poll(...all)).toEqual(all); // each learned by one exact lookup
    expect(await poll('m9', 'm8', 'm7')).toEqual([]); // the last 3 are remembered: estimated
    expect(await poll('m0')).toEqual(['m0']); // forgotten
  });

  it('forgets the least recently polled member first, counting polls answered from an estimate', async () => {
    const { poll } = await cachedLine(3, 4);
    expect(await poll('m0', 'm1', 'm2')).toEqual(['m0', 'm1', 'm2']); // learned; full
    expect(await poll('m0')).toEqual([]); // estimated; m0 is now the most recently polled, m1 the least
    expect(await poll('m3')).toEqual(['m3']); // learned: one member must go, and it is m1
    expect(await poll('m0', 'm2', 'm3')).toEqual([]);
    expect(await poll('m1')).toEqual(['m1']);
  });
});

describe('positionCache refresh limit under churn', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reads the snapshot at most once per refreshMs while members enter, are admitted and leave', async () => {
    const memory = new MemoryStore();
    let snapshots = 0;
    const store = storeWith(memory, { queueSnapshot: (queue: string) => (snapshots++, memory.queueSnapshot(queue)) });
    const queue = new WaitingQueue({ store, name: 'churn', admitRatePerSecond: 5, positionCache: { refreshMs: 250, exactBelowRank: 100 } });
    for (let i = 0; i < 3000; i++) await queue.enter(`m${i}`);
    for (let i = 1000; i < 3000; i++) await queue.position(`m${i}`); // learn their sequences
    snapshots = 0;
    // 2,000 polls over 2 s of the cache's clock (1 ms apart), one enter per ten polls,
    // an admission and a leave every 100 polls.
    for (let p = 0; p < 2000; p++) {
      vi.advanceTimersByTime(1);
      await queue.position(`m${1000 + (p % 2000)}`);
      if (p % 10 === 0) await queue.enter(`new${p}`);
      if (p % 100 === 0) {
        await queue.admit();
        await queue.leave(`m${2999 - p / 100}`);
      }
    }
    // 2 s at one snapshot per 250 ms: at most 8, plus the first.
    expect(snapshots).toBeLessThanOrEqual(9);
  });
});

describe('positionCache while the line moves', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  // A store that pushes nothing (as RedisStore without a subscriber), or whose watch is live
  // but hears nothing while the head moves (admitters of an older version, an ACL without
  // the channels): the pace is all the cache has.
  const silentWatch = { live: () => true, stop: () => undefined };
  it.each([
    ['no watch', undefined],
    ['a live watch that hears nothing', () => silentWatch],
  ])(
    'without pushes of admission steps (%s), counts the admissions since its snapshot at the pace the head moved: not behind by a snapshot of admissions',
    async (_label, watchHeadMoves) => {
      let clock = 1_000_000;
      const store = new MemoryStore({ now: () => clock });
      const options = { store, name: 'moving', admitRatePerSecond: 200, admitBurst: 10 } as const;
      const cached = new WaitingQueue({ ...options, store: storeWith(store, { watchHeadMoves }), positionCache: { refreshMs: 250, exactBelowRank: 0 } });
      const admitting = new WaitingQueue(options);
      for (let i = 0; i < 6000; i++) await admitting.enter(`m${i}`);
      for (let i = 0; i < 6000; i += 100) await cached.position(`m${i}`); // learn their sequences
      const errors: number[] = [];
      // 6 s, both clocks in steps of 10 ms: 2 members admitted every 10 ms (200/s), a poll every step.
      for (let step = 0; step < 600; step++) {
        clock += 10;
        vi.advanceTimersByTime(10);
        await admitting.admit();
        const id = `m${5000 + (step % 10) * 100}`;
        const estimated = await cached.position(id);
        const exact = await admitting.position(id);
        if (step >= 300) errors.push(estimated.rank! - exact.rank!); // after the pace is measured (2 s)
      }
      // Without the pace, an estimate is behind by up to a snapshot's admissions (50), 25 on average.
      const mean = errors.reduce((a, b) => a + b, 0) / errors.length;
      expect(Math.abs(mean)).toBeLessThan(3);
      expect(Math.max(...errors.map(Math.abs))).toBeLessThanOrEqual(4);
    },
  );

  it('with pushes, lowers every estimate by each admission step as it happens: exact while nobody leaves', async () => {
    let clock = 1_000_000;
    const store = new MemoryStore({ now: () => clock });
    // Steps of 50 every 100 ms (500/s), as an admitter with intervalMs 100 makes them.
    const options = { store, name: 'stepping', admitRatePerSecond: 500, admitBurst: 50, abandonAfterSeconds: null } as const;
    const cached = new WaitingQueue({ ...options, positionCache: { refreshMs: 250, exactBelowRank: 0 } });
    const admitting = new WaitingQueue(options);
    for (let i = 0; i < 6000; i++) await admitting.enter(`m${i}`);
    for (let i = 0; i < 6000; i += 100) await cached.position(`m${i}`);
    const errors: number[] = [];
    for (let step = 0; step < 400; step++) {
      clock += 10;
      vi.advanceTimersByTime(10);
      if (step % 10 === 0) await admitting.admit();
      const id = `m${5000 + (step % 10) * 100}`;
      const exact = (await admitting.position(id)).rank!;
      errors.push((await cached.position(id)).rank! - exact);
    }
    // (The pace alone spreads each step of 50 over the 100 ms between steps: off by up to a step.)
    expect(Math.max(...errors.map(Math.abs))).toBe(0);
  });
});
