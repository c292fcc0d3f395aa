// The event stream (GET <prefix>/events, SPEC §16) against every HTTP adapter, over real HTTP:
// the same app as the adapter suite (adapter-suite.ts), queue routes under /queue, the member
// from the x-member header. Every wait is bounded generously; nothing asserts speed.

import { describe, expect, it } from 'vitest';
import { waitForEntry } from '../../src/client/index.js';
import { MemoryStore, WaitingQueue, type Position, type WaitingQueueOptions } from '../../src/index.js';
import type { PresenceBatch } from '../../src/presence.js';
import { PICKUP_GRACE_MS } from '../../src/rates.js';
import { openEvents, type OpenStream } from '../support/sse.js';
import { storeWith } from '../support/store-with.js';
import type { AppFactory } from './adapter-suite.js';

const BOUND = { timeout: 30_000, interval: 50 };

/** The first event after the position events (ready, or null if the stream ended without one). */
async function untilReady(stream: OpenStream) {
  let item = await stream.nextEvent();
  while (item?.event === 'position') item = await stream.nextEvent();
  return item;
}

export function describeEventStream(name: string, startApp: AppFactory): void {
  async function setup(routes: { maxStreams?: number } = {}, queueOptions: Partial<WaitingQueueOptions> = {}) {
    let now = Date.now();
    /** Signs of life recorded in the store, with the store's time of each call. */
    const touches: Array<{ at: number; seen: string[] }> = [];
    /** Store reads of a member's position held until the promise settles (a look in flight). */
    const holds = new Map<string, Promise<unknown>>();
    const memory = new MemoryStore({ now: () => now });
    const store = storeWith(memory, {
      touch: (queue: string, batch: PresenceBatch) => {
        touches.push({ at: now, seen: [...batch.seen] });
        return memory.touch(queue, batch);
      },
      position: async (queue: string, memberId: string) => {
        await holds.get(memberId);
        return memory.position(queue, memberId);
      },
    });
    const queue = new WaitingQueue({ store, positionCache: true, ...queueOptions });
    const app = await startApp({ queue, settle: 'auto', onOrder: () => undefined, routes });
    if (!('url' in app)) throw new Error('the event suite runs over real HTTP');
    const url = app.url;
    const events = (member?: string) => openEvents(`${url}/queue/events`, member === undefined ? {} : { 'x-member': member });
    const call = async (method: string, path: string, member: string) =>
      (await fetch(url + path, { method, headers: { 'x-member': member } })).json() as Promise<Position>;
    return { queue, app, url, events, call, touches, holds, advance: (ms: number) => (now += ms) };
  }

  // Generous bounds: the suite runs beside the whole CI under load; nothing here measures speed.
  describe(`event stream: ${name}`, { timeout: 90_000 }, () => {
    it('sends a jittered retry, the position as GET /position answers it, then ready once after admit() (and ends)', async () => {
      const { app, queue, events, call } = await setup();
      try {
        await call('POST', '/queue/enter', 'alice');
        const alice = await events('alice');
        try {
          expect(alice.response.status).toBe(200);
          expect(alice.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
          expect(alice.response.headers.get('cache-control')).toBe('no-store');
          const retry = await alice.next();
          expect(retry).toMatchObject({ kind: 'retry' });
          expect((retry as { ms: number }).ms).toBeGreaterThanOrEqual(800); // 1 s polling interval, ±20%
          expect((retry as { ms: number }).ms).toBeLessThanOrEqual(1200);
          const first = await alice.nextEvent();
          expect(first).toEqual({ event: 'position', data: await call('GET', '/queue/position', 'alice') });
          expect(first!.data).toMatchObject({ status: 'WAITING', rank: 0 });
          const [admission] = await queue.admit();
          const ready = await alice.nextEvent();
          expect(ready).toEqual({ event: 'ready', data: await call('GET', '/queue/position', 'alice') });
          expect(ready!.data).toMatchObject({ status: 'READY', entryToken: admission!.entryToken });
          expect(await alice.next()).toBeNull(); // ready once: the stream ends
        } finally {
          alice.close();
        }
      } finally {
        await app.close();
      }
    });

    it('never misses a READY that comes while the stream opens', async () => {
      const { app, queue, events, call } = await setup();
      try {
        for (const member of ['m0', 'm1', 'm2', 'm3']) await call('POST', '/queue/enter', member);
        // Each admission races the opening of its member's stream.
        const streams = await Promise.all([events('m0'), events('m1'), events('m2'), events('m3'), queue.admit()]);
        for (const stream of streams.slice(0, 4) as OpenStream[]) {
          try {
            expect(await untilReady(stream)).toMatchObject({ event: 'ready', data: { status: 'READY' } });
          } finally {
            stream.close();
          }
        }
      } finally {
        await app.close();
      }
    });

    it('tells a member further back its new place after an admission step', async () => {
      const { app, queue, events, call } = await setup({}, { admitRatePerSecond: 1, admitBurst: 1 });
      try {
        for (const member of ['a', 'b', 'c']) await call('POST', '/queue/enter', member);
        const c = await events('c');
        try {
          expect(await c.nextEvent()).toMatchObject({ event: 'position', data: { rank: 2 } });
          await queue.admit();
          expect(await c.nextEvent()).toMatchObject({ event: 'position', data: { rank: 1 } });
        } finally {
          c.close();
        }
      } finally {
        await app.close();
      }
    });

    // Pacing (nearHeadRank): below max(the fastest tier's belowRank, 2 × admitBurst) every step, further back at the member's polling pace.
    const paced = (farSeconds: number): Partial<WaitingQueueOptions> => ({
      admitRatePerSecond: 1,
      admitBurst: 1,
      abandonAfterSeconds: null,
      pollingIntervals: [{ belowRank: 3, seconds: 1 }, { seconds: farSeconds }],
    });

    it('tells a member near the head every admission step', async () => {
      const { app, queue, events, call, advance } = await setup({}, paced(60));
      try {
        for (const member of ['a', 'b', 'c']) await call('POST', '/queue/enter', member);
        const c = await events('c');
        try {
          expect(await c.nextEvent()).toMatchObject({ event: 'position', data: { rank: 2 } });
          for (const rank of [1, 0]) {
            advance(1000); // a token for the next step
            expect(await queue.admit()).toHaveLength(1);
            expect(await c.nextEvent()).toMatchObject({ event: 'position', data: { rank } });
          }
          advance(1000);
          await queue.admit();
          expect(await untilReady(c)).toMatchObject({ event: 'ready', data: { status: 'READY' } });
        } finally {
          c.close();
        }
      } finally {
        await app.close();
      }
    });

    it('tells a member further back its new place at its polling pace, not at every step', async () => {
      const { app, queue, events, call, advance } = await setup({}, paced(3));
      try {
        for (const member of ['a', 'b', 'c', 'd', 'e', 'f']) await call('POST', '/queue/enter', member);
        const [c, f] = [await events('c'), await events('f')];
        try {
          expect(await c.nextEvent()).toMatchObject({ event: 'position', data: { rank: 2 } });
          expect(await f.nextEvent()).toMatchObject({ event: 'position', data: { rank: 5, pollingIntervalSeconds: 3 } });
          for (const rank of [1, 0]) {
            advance(1000);
            expect(await queue.admit()).toHaveLength(1);
            expect(await c.nextEvent()).toMatchObject({ event: 'position', data: { rank } }); // the step's round has run
          }
          // Both steps in one event, within about its 3 s polling interval (the bound only stops a hang).
          expect(await f.nextEvent()).toMatchObject({ event: 'position', data: { rank: 3 } });
        } finally {
          c.close();
          f.close();
        }
      } finally {
        await app.close();
      }
    });

    it('tells READY at once, and a change of the controls to every member, even one whose polling pace is a minute', async () => {
      // admitBurst 2: ranks below 4 see every step, though only rank 0 is in the 1 s tier.
      const { app, queue, events, call, advance } = await setup(
        {},
        { ...paced(60), admitBurst: 2, pollingIntervals: [{ belowRank: 1, seconds: 1 }, { seconds: 60 }] },
      );
      try {
        for (const member of ['a', 'b', 'c', 'd', 'e', 'f']) await call('POST', '/queue/enter', member);
        const [b, f] = [await events('b'), await events('f')];
        try {
          expect(await b.nextEvent()).toMatchObject({ event: 'position', data: { rank: 1, pollingIntervalSeconds: 60 } });
          expect(await f.nextEvent()).toMatchObject({ event: 'position', data: { rank: 5, pollingIntervalSeconds: 60 } });
          advance(2000);
          expect(await queue.admit()).toHaveLength(2);
          expect(await untilReady(b)).toMatchObject({ event: 'ready', data: { status: 'READY' } }); // well before its 60 s pace
          await queue.setControls({ mode: 'paused', message: 'Back soon' });
          let item = await f.nextEvent();
          while (item?.event === 'position' && (item.data as Position).queueMode !== 'paused') item = await f.nextEvent();
          expect(item).toMatchObject({ event: 'position', data: { queueMode: 'paused', message: 'Back soon' } });
        } finally {
          b.close();
          f.close();
        }
      } finally {
        await app.close();
      }
    });

    it('answers 401 without a member, 400 for a bad member id, and 503 with Retry-After past maxStreams', async () => {
      const { app, events, call } = await setup({ maxStreams: 1 });
      try {
        const none = await events();
        expect(none.response.status).toBe(401);
        expect(await none.response.json()).toMatchObject({ error: { code: 'UNAUTHENTICATED' } });
        const bad = await events('x'.repeat(129));
        expect(bad.response.status).toBe(400);
        expect(await bad.response.json()).toMatchObject({ error: { code: 'INVALID_MEMBER_ID' } });
        await call('POST', '/queue/enter', 'alice');
        await call('POST', '/queue/enter', 'bob');
        const alice = await events('alice');
        expect(await alice.nextEvent()).toMatchObject({ event: 'position' });
        const bob = await events('bob');
        expect(bob.response.status).toBe(503);
        expect(Number(bob.response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(await bob.response.json()).toMatchObject({ error: { code: 'TOO_MANY_STREAMS' } });
        alice.close(); // the client hangs up: its place among the streams is freed
        await expect
          .poll(async () => {
            const again = await events('bob');
            again.close();
            return again.response.status;
          }, BOUND)
          .toBe(200);
      } finally {
        await app.close();
      }
    });

    it('keeps one stream per member: a newer stream of the same member replaces the older (ended), never taking a second place', async () => {
      const { app, events, call } = await setup({ maxStreams: 2 });
      try {
        await call('POST', '/queue/enter', 'alice');
        await call('POST', '/queue/enter', 'bob');
        const tabs: OpenStream[] = [];
        try {
          for (let i = 0; i < 5; i++) {
            const tab = await events('alice');
            expect(tab.response.status).toBe(200);
            expect(await tab.nextEvent()).toMatchObject({ event: 'position' });
            tabs.push(tab);
          }
          // Every older tab was ended cleanly by the newer one; the newest stays open.
          for (const older of tabs.slice(0, -1)) expect(await untilReady(older)).toBeNull();
          const bob = await events('bob');
          try {
            expect(bob.response.status).toBe(200);
            expect(await bob.nextEvent()).toMatchObject({ event: 'position' });
          } finally {
            bob.close();
          }
        } finally {
          for (const tab of tabs) tab.close();
        }
      } finally {
        await app.close();
      }
    });

    it('records a READY as picked up only once written to an open stream: a token whose client hung up mid-look is still dropped at pickupTimeoutSeconds', async () => {
      const { app, queue, events, call, holds, advance } = await setup({}, { positionCache: false, pickupTimeoutSeconds: 30, maxActive: 10 });
      try {
        await call('POST', '/queue/enter', 'gone');
        await call('POST', '/queue/enter', 'here');
        const gone = await events('gone');
        const here = await events('here');
        try {
          expect(await gone.nextEvent()).toMatchObject({ event: 'position' });
          expect(await here.nextEvent()).toMatchObject({ event: 'position' });
          // gone's next look waits in the store; its client hangs up while it does.
          let looking = (): void => undefined;
          let release = (): void => undefined;
          const inFlight = new Promise<void>((resolve) => (looking = resolve));
          holds.set(
            'gone',
            new Promise<void>((resolve) => {
              looking();
              release = resolve;
            }),
          );
          const admitted = (await queue.admit()).map((a) => a.memberId);
          expect(admitted.sort()).toEqual(['gone', 'here']);
          await inFlight;
          gone.close();
          await new Promise((resolve) => setTimeout(resolve, 500)); // the server sees the hang-up
          holds.delete('gone');
          release();
          expect(await untilReady(here)).toMatchObject({ event: 'ready', data: { status: 'READY' } });
          await new Promise((resolve) => setTimeout(resolve, 200)); // gone's look answers READY, to nobody
          await queue.admit(); // flushes this instance's pick-ups, at the store's time before the deadline
          advance(30_000 + PICKUP_GRACE_MS + 1);
          await queue.admit();
          expect(await queue.state('gone')).toBe('NOT_ENTERED'); // nobody read it: dropped
          expect(await queue.state('here')).toBe('READY'); // told on its open stream: picked up
        } finally {
          gone.close();
          here.close();
        }
      } finally {
        await app.close();
      }
    });

    it('keeps a member with an open stream and no polls present (abandonment), while a silent one is dropped', async () => {
      const { app, queue, events, call, touches, advance } = await setup();
      try {
        await call('POST', '/queue/enter', 'silent');
        await call('POST', '/queue/enter', 'streaming');
        const stream = await events('streaming');
        try {
          expect(await stream.nextEvent()).toMatchObject({ event: 'position', data: { rank: 1 } });
          const later = advance(200_000); // 200 s of the store's clock: neither polls
          await expect.poll(() => touches.some((t) => t.at >= later && t.seen.includes('streaming')), BOUND).toBe(true);
          advance(200_000); // 400 s in all: past abandonAfterSeconds (300) since the silent one's last sign of life
          const dropped: string[] = [];
          queue.on('abandoned', (members) => dropped.push(...members.map((m) => m.memberId)));
          const admitted: string[] = [];
          for (let step = 0; step < 10 && admitted.length === 0; step++) admitted.push(...(await queue.admit()).map((a) => a.memberId));
          expect(admitted).toEqual(['streaming']);
          expect(dropped).toEqual(['silent']);
          expect(await untilReady(stream)).toMatchObject({ event: 'ready', data: { status: 'READY' } });
        } finally {
          stream.close();
        }
      } finally {
        await app.close();
      }
    });

    it('waitgate/client follows the stream when offered, and polls with the same result when it is refused', async () => {
      for (const maxStreams of [10, 0]) {
        const { app, queue, url } = await setup({ maxStreams });
        try {
          const asked: string[] = [];
          const positions: Position[] = [];
          const waiting = waitForEntry({
            url: `${url}/queue`,
            headers: { 'x-member': 'alice' },
            onPosition: (p) => positions.push(p),
            fetch: (input, init) => {
              asked.push(new URL(String(input)).pathname);
              return fetch(input, init);
            },
          });
          await expect.poll(() => asked.length, BOUND).toBeGreaterThanOrEqual(2); // entered, then the stream (or the first poll)
          const [admission] = await queue.admit();
          const grant = await waiting;
          expect(grant).toMatchObject({ entryToken: admission!.entryToken, position: { status: 'READY', entryToken: admission!.entryToken } });
          expect(positions.at(-1)).toEqual(grant.position);
          if (maxStreams > 0) expect(asked).toEqual(['/queue/enter', '/queue/events']);
          else {
            expect(asked.slice(0, 2)).toEqual(['/queue/enter', '/queue/events']);
            expect(asked.slice(2).every((path) => path === '/queue/position')).toBe(true);
            expect(asked.length).toBeGreaterThan(2);
          }
        } finally {
          await app.close();
        }
      }
    });
  });
}
