// waitgate/client against real servers: the Express adapter for the happy path, and a
// scripted node:http server for 503s, dropped connections and refusals.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { QueueClientError, leave, waitForEntry } from '../../src/client/index.js';
import { queueRoutes } from '../../src/http/express.js';
import { MemoryStore, WaitingQueue, type Position } from '../../src/index.js';
import { waitingPosition } from '../support/positions.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  closers.push(() => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A real app: queue routes of the Express adapter over a MemoryStore; every poll is timestamped. */
async function shop(pollSeconds: number) {
  const queue = new WaitingQueue({ store: new MemoryStore(), pollingIntervals: [{ seconds: pollSeconds }], lanes: [{ name: 'vip', share: 0.5 }] });
  const polls: number[] = [];
  const app = express();
  app.use((req, _res, next) => (polls.push(Date.now()), next()));
  app.use('/queue', queueRoutes(queue, { memberId: (req) => req.get('x-member') }));
  const url = await listen(app);
  return { queue, polls, url: `${url}/queue` };
}

function waitingBody(rank: number, seconds: number): Position {
  return waitingPosition({ rank, currentTotalWaitingCount: rank + 1, estimatedWaitSeconds: rank, pollingIntervalSeconds: seconds });
}

describe('waitForEntry', () => {
  it('enters, reports each position, and resolves with the token once admitted', async () => {
    const { queue, url } = await shop(0.05);
    await queue.enter('first');
    const positions: Position[] = [];
    // Polling only (the event stream has its own tests: test/http/event-suite.ts).
    const waiting = waitForEntry({ url, headers: { 'x-member': 'alice' }, stream: false, onPosition: (p) => positions.push(p) });
    await expect.poll(() => positions.length).toBeGreaterThan(2);
    expect(positions[0]).toMatchObject({ status: 'WAITING', rank: 1 });
    await queue.admit(); // admits both
    const grant = await waiting;
    expect(grant.entryToken).toBe((await queue.token('alice'))!.entryToken);
    expect(grant.position.status).toBe('READY');
    expect(positions.at(-1)!.status).toBe('READY');
  });

  it('enters with an invite code: its lane, the code spent once; a spent code rejects with CODE_INVALID', async () => {
    const { queue, url } = await shop(0.05);
    await queue.addCodes('vip', ['VIP-9']);
    await queue.enter('first');
    const positions: Position[] = [];
    const waiting = waitForEntry({ url, headers: { 'x-member': 'alice' }, stream: false, code: 'VIP-9', onPosition: (p) => positions.push(p) });
    await expect.poll(() => positions.length).toBeGreaterThan(2);
    expect(positions[0]).toMatchObject({ status: 'WAITING', rank: 0, currentTotalWaitingCount: 2 }); // first in the vip lane
    expect((await queue.stats()).lanes![1]).toMatchObject({ name: 'vip', waiting: 1, codeUsesLeft: 0 });
    await queue.admit();
    expect((await waiting).position.status).toBe('READY');
    const refused = await waitForEntry({ url, headers: { 'x-member': 'bob' }, stream: false, code: 'VIP-9' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(QueueClientError);
    expect(refused).toMatchObject({ status: 403, code: 'CODE_INVALID' });
  });

  it('polls at the hinted interval, spread by the jitter', async () => {
    const { url, polls } = await shop(0.2);
    const controller = new AbortController();
    // random() = 1 is the top of the jitter: every wait is 0.2 s + 20% = 240 ms.
    const waiting = waitForEntry({ url, headers: { 'x-member': 'alice' }, stream: false, signal: controller.signal, random: () => 0.999999 });
    await new Promise((r) => setTimeout(r, 1300));
    controller.abort();
    await expect(waiting).rejects.toThrow();
    const gaps = polls.slice(1).map((t, i) => t - polls[i]!);
    expect(polls.length).toBeGreaterThanOrEqual(3);
    expect(polls.length).toBeLessThanOrEqual(6); // 1.3 s / 240 ms + the first
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(235);
  });

  it('stops on abort: rejects with the reason and sends nothing more', async () => {
    const { url, polls } = await shop(0.05);
    const controller = new AbortController();
    const waiting = waitForEntry({ url, headers: { 'x-member': 'alice' }, signal: controller.signal });
    await expect.poll(() => polls.length).toBeGreaterThan(1);
    controller.abort(new Error('user left the page'));
    await expect(waiting).rejects.toThrow('user left the page');
    const count = polls.length;
    await new Promise((r) => setTimeout(r, 200));
    expect(polls.length).toBe(count);
  });

  it('honours Retry-After on 503 and keeps going', async () => {
    const hits: number[] = [];
    const url = await listen((req, res) => {
      hits.push(Date.now());
      if (hits.length <= 2) {
        res.writeHead(503, { 'retry-after': '1', 'content-type': 'application/json' }).end('{"error":{"code":"STORE_UNAVAILABLE","message":"down"}}');
        return;
      }
      const ready = { ...waitingBody(0, 1), status: 'READY', rank: null, estimatedWaitSeconds: null, entryToken: 'tok', entryTokenExpiresAt: 123 };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(ready));
    });
    const grant = await waitForEntry({ url, random: () => 0 });
    expect(grant).toMatchObject({ entryToken: 'tok', expiresAt: 123 });
    // Never before the 1 s Retry-After, whatever the jitter draws.
    expect(hits[1]! - hits[0]!).toBeGreaterThanOrEqual(990);
    expect(hits[2]! - hits[1]!).toBeGreaterThanOrEqual(990);
  });

  it('backs off exponentially on network errors', async () => {
    const hits: number[] = [];
    const url = await listen((req, res) => {
      hits.push(Date.now());
      if (hits.length <= 2) return void req.socket.destroy();
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ...waitingBody(0, 1), status: 'READY', rank: null, estimatedWaitSeconds: null, entryToken: 'tok', entryTokenExpiresAt: 1 }));
    });
    await waitForEntry({ url, random: () => 0.5, maxBackoffSeconds: 30 });
    // random() = 0.5 means no jitter: 1 s after the first failure, 2 s after the second.
    expect(hits[1]! - hits[0]!).toBeGreaterThanOrEqual(990);
    expect(hits[2]! - hits[1]!).toBeGreaterThanOrEqual(1990);
  }, 10_000);

  it('rejects with QueueClientError when the server refuses the member', async () => {
    const { url } = await shop(0.05);
    const error = (await waitForEntry({ url }).catch((e: unknown) => e)) as QueueClientError;
    expect(error).toBeInstanceOf(QueueClientError);
    expect(error).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
  });

  it('enters again when the member dropped out of the queue', async () => {
    const { queue, url, polls } = await shop(0.05);
    const positions: Position[] = [];
    const waiting = waitForEntry({ url, headers: { 'x-member': 'alice' }, onPosition: (p) => positions.push(p) });
    await expect.poll(() => positions.length).toBeGreaterThan(1);
    await queue.leave('alice');
    await expect.poll(() => positions.some((p) => p.status === 'NOT_ENTERED')).toBe(true);
    await expect.poll(() => queue.state('alice')).toBe('WAITING');
    await queue.admit();
    expect((await waiting).position.status).toBe('READY');
    expect(polls.length).toBeGreaterThan(3);
  });
});

describe('leaving the queue', () => {
  it('leaveOnAbort: an aborted wait gives up the place, so the member is never admitted', async () => {
    const { queue, url } = await shop(0.05);
    await queue.enter('first');
    const controller = new AbortController();
    const positions: Position[] = [];
    const waiting = waitForEntry({
      url,
      headers: { 'x-member': 'alice' },
      signal: controller.signal,
      leaveOnAbort: true,
      onPosition: (p) => positions.push(p),
    });
    await expect.poll(() => positions.length).toBeGreaterThan(0);
    controller.abort(new Error('page closed'));
    await expect(waiting).rejects.toThrow('page closed');
    await expect.poll(async () => (await queue.position('alice')).status).toBe('NOT_ENTERED');
    expect((await queue.admit()).map((a) => a.memberId)).toEqual(['first']);
  });

  it('without leaveOnAbort an aborted wait keeps the place', async () => {
    const { queue, url } = await shop(0.05);
    const controller = new AbortController();
    const positions: Position[] = [];
    const waiting = waitForEntry({ url, headers: { 'x-member': 'alice' }, signal: controller.signal, onPosition: (p) => positions.push(p) });
    await expect.poll(() => positions.length).toBeGreaterThan(0);
    controller.abort();
    await expect(waiting).rejects.toBeDefined();
    await new Promise((r) => setTimeout(r, 100));
    expect((await queue.position('alice')).status).toBe('WAITING');
  });

  it('leave() gives up the place with one DELETE', async () => {
    const { queue, url } = await shop(1);
    await queue.enter('alice');
    expect(await leave({ url, headers: { 'x-member': 'alice' } })).toBe(true);
    expect((await queue.position('alice')).status).toBe('NOT_ENTERED');
  });
});

describe('a queue whose state was lost', () => {
  it('stops on 503 QUEUE_STATE_LOST with a clear error instead of polling forever', async () => {
    let requests = 0;
    const url = await listen((_req, res) => {
      requests++;
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'QUEUE_STATE_LOST', message: 'The waiting queue was reset on the server.' } }));
    });
    const error = await waitForEntry({ url }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(QueueClientError);
    expect(error).toMatchObject({ status: 503, code: 'QUEUE_STATE_LOST', message: 'The waiting queue was reset on the server.' });
    expect(requests).toBe(1);
  });
});

describe('one place per identity', () => {
  it('rejects with 409 IDENTITY_LIMIT at once, without retrying, when another member id of the identity holds the place', async () => {
    const queue = new WaitingQueue({ store: new MemoryStore(), pollingIntervals: [{ seconds: 0.05 }] });
    let enters = 0;
    const app = express();
    app.use((req, _res, next) => (req.method === 'POST' && enters++, next()));
    app.use('/queue', queueRoutes(queue, { memberId: (req) => req.get('x-member'), identity: (req) => req.get('x-identity') }));
    const url = `${await listen(app)}/queue`;
    await queue.enter('alice-laptop', { identity: 'alice' });
    const error = await waitForEntry({ url, headers: { 'x-member': 'alice-phone', 'x-identity': 'alice' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueueClientError);
    expect(error).toMatchObject({ status: 409, code: 'IDENTITY_LIMIT' });
    expect(enters).toBe(1);
  });
});

describe('a closed queue', () => {
  it('rejects with QUEUE_CLOSED and the operator message', async () => {
    const { queue, url } = await shop(0.05);
    await queue.setControls({ mode: 'closed', message: 'Sold out, thank you!' });
    const error = await waitForEntry({ url, headers: { 'x-member': 'alice' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueueClientError);
    expect(error).toMatchObject({ status: 403, code: 'QUEUE_CLOSED', message: 'Sold out, thank you!' });
  });

  it('keeps a member of a paused queue polling, then lets it in when it reopens', async () => {
    const { queue, url } = await shop(0.05);
    await queue.setControls({ mode: 'paused', message: 'Back soon' });
    const positions: Position[] = [];
    const waiting = waitForEntry({ url, headers: { 'x-member': 'alice' }, onPosition: (p) => positions.push(p) });
    await expect.poll(() => positions.length).toBeGreaterThan(0);
    expect(positions[0]).toMatchObject({ status: 'WAITING', queueMode: 'paused', message: 'Back soon', estimatedWaitSeconds: null });
    expect(await queue.admit()).toEqual([]);
    await queue.setControls({ mode: 'open', message: null });
    await queue.admit();
    expect((await waiting).position.status).toBe('READY');
  });
});
