// powGate (SPEC §17): proof of work through altcha-lib, over real HTTP behind the Express
// routes; the solution travels in X-Waitgate-Challenge and is accepted once.

import type { AddressInfo } from 'node:net';
import { createChallenge, solveChallenge } from 'altcha-lib/v1';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { MemoryStore, WaitgateConfigError, WaitingQueue, type Position } from '../../src/index.js';
import { powGate, type PowChallenge } from '../../src/gate/index.js';
import { queueRoutes } from '../../src/http/express.js';

const hmacKey = 'a pow key for the tests, 32 chars';

async function start(gate = powGate({ hmacKey, difficulty: 2000 })) {
  const queue = new WaitingQueue({ store: new MemoryStore(), admitRatePerSecond: 100 });
  const app = express();
  app.use('/queue', queueRoutes(queue, { memberId: (req) => req.get('x-member'), gate }));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const enter = (member: string, solution?: string) =>
    fetch(`${url}/queue/enter`, { method: 'POST', headers: { 'x-member': member, ...(solution ? { 'x-waitgate-challenge': solution } : {}) } });
  return { queue, enter, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

async function challengeOf(response: Response): Promise<PowChallenge> {
  expect(response.status).toBe(401);
  const body = (await response.json()) as { error: { code: string; challenge: PowChallenge } };
  expect(body.error.code).toBe('CHALLENGE_REQUIRED');
  return body.error.challenge;
}

/** Solves with altcha-lib's own solver and encodes the payload as the ALTCHA widget does. */
async function solve(c: { challenge: string; salt: string; maxnumber: number; signature: string }): Promise<string> {
  const solution = await solveChallenge(c.challenge, c.salt, 'SHA-256', c.maxnumber).promise;
  expect(solution).not.toBeNull();
  return btoa(JSON.stringify({ algorithm: 'SHA-256', challenge: c.challenge, number: solution!.number, salt: c.salt, signature: c.signature }));
}

describe('powGate', () => {
  it('challenges, allows a member with its solution, and accepts each solution once', async () => {
    const { queue, enter, close } = await start();
    try {
      const challenge = await challengeOf(await enter('alice'));
      expect(challenge).toMatchObject({ kind: 'pow', algorithm: 'SHA-256', maxnumber: 2000, header: 'x-waitgate-challenge' });
      expect((await queue.stats()).waiting).toBe(0);
      const solution = await solve(challenge);
      const entered = await enter('alice', solution);
      expect(entered.status).toBe(200);
      expect(((await entered.json()) as Position).status).toBe('WAITING');
      await queue.leave('alice');
      // The same solution again: refused with a new challenge, nothing written.
      const replay = await challengeOf(await enter('alice', solution));
      expect(replay.salt).not.toBe(challenge.salt);
      expect((await queue.stats()).waiting).toBe(0);
    } finally {
      await close();
    }
  });

  it("refuses another member's solution, an expired one, a wrong number and garbage", async () => {
    const { queue, enter, close } = await start();
    try {
      const forAlice = await challengeOf(await enter('alice'));
      await challengeOf(await enter('bob', await solve(forAlice)));
      const member = new URLSearchParams(forAlice.salt.split('?')[1]).get('member')!;
      const expired = await createChallenge({ hmacKey, maxnumber: 50, expires: new Date(Date.now() - 1000), params: { member } });
      await challengeOf(await enter('alice', await solve({ ...expired, maxnumber: 50 })));
      const right = JSON.parse(atob(await solve(forAlice))) as { number: number };
      await challengeOf(await enter('alice', btoa(JSON.stringify({ ...right, number: right.number + 1 }))));
      await challengeOf(await enter('alice', '%%% not base64'));
      await challengeOf(await enter('alice', btoa('{"algorithm":"SHA-1"}')));
      expect((await queue.stats()).waiting).toBe(0);
      // The right one still works: the failures spent nothing.
      expect((await enter('alice', await solve(forAlice))).status).toBe(200);
    } finally {
      await close();
    }
  });

  it('asks more work as the pressure rises (20 times at most), none below minPressure', async () => {
    const gate = powGate({ hmacKey, difficulty: 1000, minPressure: 0.5 });
    const maxnumber = async (pressure: number) => ((await gate({ headers: {} }, { memberId: 'a', pressure })).challenge as PowChallenge).maxnumber;
    expect(await maxnumber(0.5)).toBe(1000);
    expect(await maxnumber(1)).toBe(1000);
    expect(await maxnumber(4)).toBe(4000);
    expect(await maxnumber(1000)).toBe(20_000);
    expect(await gate({ headers: {} }, { memberId: 'a', pressure: 0.2 })).toEqual({ verdict: 'allow' });
    const custom = powGate({ hmacKey, difficulty: (p) => 10 + p });
    expect(((await custom({ headers: {} }, { memberId: 'a', pressure: 5 })).challenge as PowChallenge).maxnumber).toBe(15);
  });

  it('onInvalid: shadow shadows a bad solution (and still challenges a missing one)', async () => {
    const gate = powGate({ hmacKey, onInvalid: 'shadow' });
    expect((await gate({ headers: { 'x-waitgate-challenge': 'bm9wZQ==' } }, { memberId: 'a', pressure: 1 })).verdict).toBe('shadow');
    expect((await gate({ headers: {} }, { memberId: 'a', pressure: 1 })).verdict).toBe('challenge');
  });

  it('refuses bad options', () => {
    expect(() => powGate({ hmacKey: 'short' })).toThrow(WaitgateConfigError);
    expect(() => powGate({ hmacKey, difficulty: 0 })).toThrow(WaitgateConfigError);
    expect(() => powGate({ hmacKey, extra: 1 } as never)).toThrow(WaitgateConfigError);
  });
});
