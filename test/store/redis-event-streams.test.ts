// Event streams (GET …/events, SPEC §16) on real Redis across instances: one instance serves the
// streams (positionCache, a subscriber for the pushed steps), another admits. Each admission step
// of the other instance reaches the streams as a new place, and the serving instance asks the
// store nothing per member per step: its places come from the shared snapshot and the pushes.

import type { AddressInfo } from 'node:net';
import express from 'express';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { queueRoutes } from '../../src/http/express.js';
import { RedisStore, WaitingQueue, type Store } from '../../src/index.js';
import { openEvents } from '../support/sse.js';
import { storeWith } from '../support/store-with.js';
import { uniqueName } from '../support/unique.js';

const closing: Array<() => unknown> = [];
afterAll(async () => {
  for (const close of closing.reverse()) await close();
});

function ioredis(): Redis {
  const client = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
  closing.push(() => client.disconnect());
  return client;
}

describe('event streams on RedisStore, steps admitted by another instance', { timeout: 90_000 }, () => {
  it('tells each stream its new place after every step of the other instance, with no store call per member per step', async () => {
    const name = uniqueName('events');
    let positionCalls = 0;
    const serving = new RedisStore({ client: ioredis(), subscriber: ioredis() });
    const counted: Store = storeWith(serving, {
      position: (queue: string, member: string) => {
        positionCalls++;
        return serving.position(queue, member);
      },
    });
    // exactBelowRank 0: every member this instance knows is estimated, however near the head.
    const options = { name, admitRatePerSecond: 1, admitBurst: 1, abandonAfterSeconds: null } as const;
    const streamsQueue = new WaitingQueue({ ...options, store: counted, positionCache: { exactBelowRank: 0 } });
    const admitter = new WaitingQueue({ ...options, store: new RedisStore({ client: ioredis() }) });
    const app = express();
    app.use('/queue', queueRoutes(streamsQueue, { memberId: (req) => req.get('x-member') }));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    closing.push(() => new Promise((resolve) => server.close(resolve)));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/queue/events`;

    const members = ['a', 'b', 'c', 'd', 'e', 'f'];
    for (const m of members) await admitter.enter(m);
    const streams = await Promise.all(members.slice(3).map((m) => openEvents(url, { 'x-member': m })));
    try {
      for (const [i, stream] of streams.entries()) expect(await stream.nextEvent()).toMatchObject({ event: 'position', data: { rank: 3 + i } });
      const firstLooks = positionCalls; // one exact look-up per stream: the instance learns each member
      for (let step = 1; step <= 3; step++) {
        await new Promise((resolve) => setTimeout(resolve, 1100)); // the bucket refills one admission a second
        expect(await admitter.admit()).toHaveLength(1);
        for (const [i, stream] of streams.entries()) expect(await stream.nextEvent()).toMatchObject({ event: 'position', data: { rank: 3 + i - step } });
      }
      expect(positionCalls).toBe(firstLooks);
    } finally {
      for (const stream of streams) stream.close();
    }
  });
});
