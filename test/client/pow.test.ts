// waitgate/client and the gate: it solves powGate's proof of work (Web Crypto SHA-256) when enter
// answers 401 CHALLENGE_REQUIRED and enters with the solution; other challenges go to onChallenge.

import type { AddressInfo } from 'node:net';
import { verifySolution } from 'altcha-lib/v1';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { QueueClientError, isPowChallenge, solvePowChallenge, waitForEntry } from '../../src/client/index.js';
import { powGate, requestHeader, type Gate } from '../../src/gate/index.js';
import { queueRoutes } from '../../src/http/express.js';
import { MemoryStore, WaitingQueue } from '../../src/index.js';

const hmacKey = 'the client test key, long enough';
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function shop(gate: Gate<unknown>) {
  const queue = new WaitingQueue({ store: new MemoryStore(), pollingIntervals: [{ seconds: 0.05 }] });
  const enters: Array<string | undefined> = [];
  const app = express();
  app.use((req, _res, next) => (req.path.endsWith('/enter') && enters.push(req.get('x-waitgate-challenge')), next()));
  app.use('/queue', queueRoutes(queue, { memberId: (req) => req.get('x-member'), gate }));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  closers.push(() => new Promise((r) => server.close(() => r())));
  return { queue, enters, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/queue` };
}

describe('waitgate/client and the gate', () => {
  it('solves a proof-of-work challenge, enters with the solution and waits until READY', async () => {
    const { queue, enters, url } = await shop(powGate({ hmacKey, difficulty: 5000 }));
    const admitter = setInterval(() => void queue.admit(), 50);
    try {
      const grant = await waitForEntry({ url, headers: { 'x-member': 'alice' }, jitter: 0 });
      expect(grant.entryToken).toHaveLength(43);
      expect(enters).toHaveLength(2);
      expect(enters[0]).toBeUndefined();
      expect(await verifySolution(enters[1]!, hmacKey)).toBe(true);
    } finally {
      clearInterval(admitter);
    }
  });

  it('hands any other challenge to onChallenge and sends its answer in the named header', async () => {
    const gate: Gate<unknown> = (req) =>
      requestHeader(req, 'x-waitgate-challenge') === 'widget-token'
        ? { verdict: 'allow' }
        : { verdict: 'challenge', challenge: { kind: 'siteverify', siteKey: 'k', header: 'x-waitgate-challenge' } };
    const { queue, url } = await shop(gate);
    const seen: unknown[] = [];
    const admitter = setInterval(() => void queue.admit(), 50);
    try {
      const grant = await waitForEntry({ url, headers: { 'x-member': 'bob' }, onChallenge: async (c) => (seen.push(c), 'widget-token') });
      expect(grant.entryToken).toHaveLength(43);
      expect(seen).toEqual([{ kind: 'siteverify', siteKey: 'k', header: 'x-waitgate-challenge' }]);
      // Without onChallenge: a QueueClientError carrying the challenge.
      const refused = await waitForEntry({ url, headers: { 'x-member': 'carol' } }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(QueueClientError);
      expect((refused as QueueClientError).code).toBe('CHALLENGE_REQUIRED');
      expect((refused as QueueClientError).challenge).toMatchObject({ kind: 'siteverify' });
    } finally {
      clearInterval(admitter);
    }
  });

  it('gives up after a few challenges in a row (a gate that never lets in)', async () => {
    let asked = 0;
    const { url } = await shop(() => (asked++, { verdict: 'challenge', challenge: { kind: 'other', header: 'x-waitgate-challenge' } }));
    const error = await waitForEntry({ url, headers: { 'x-member': 'dan' }, onChallenge: async () => 'nope' }).catch((e: unknown) => e);
    expect((error as QueueClientError).code).toBe('CHALLENGE_REQUIRED');
    expect(asked).toBe(4);
  });

  it('solvePowChallenge: the solution altcha-lib verifies; isPowChallenge refuses what it cannot solve', async () => {
    const decision = await powGate({ hmacKey, difficulty: 2000 })({ headers: {} }, { memberId: 'm', pressure: 1 });
    expect(isPowChallenge(decision.challenge)).toBe(true);
    const solution = await solvePowChallenge(decision.challenge as never);
    expect(await verifySolution(solution, hmacKey)).toBe(true);
    expect(isPowChallenge({ ...(decision.challenge as object), algorithm: 'SHA-1' })).toBe(false);
    expect(isPowChallenge(null)).toBe(false);
  });
});
