// positionCache against the exact path, on random walks of two app instances sharing one
// MemoryStore: one polls through the cache, the other enters, admits and lets members leave.
// (The same cache runs on RedisStore in the contract suite; the walk needs speed and a
// controllable clock, so it runs here on the memory store.)

import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore, WaitingQueue } from '../src/index.js';

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
