// Fair entry at the routes (SPEC §17), run against every HTTP adapter with the app of its
// behaviour table (adapter-suite.ts): the gate before the line (each verdict, what it writes:
// nothing, unless allowed; shadowed members' later polls) and one place per identity.

import { describe, expect, it } from 'vitest';
import { MemoryStore, WaitingQueue, type Position } from '../../src/index.js';
import type { GateContext, GateDecision } from '../../src/http/core.js';
import { requestHeader } from '../../src/http/request-header.js';
import type { AppFactory, AppHandle } from './adapter-suite.js';

function send(app: AppHandle, path: string, init: RequestInit): Promise<Response> {
  return 'url' in app ? fetch(app.url + path, init) : app.request(new Request(`http://waitgate.test${path}`, init));
}

/** A gate that answers the verdict of the request's `x-verdict` header (read through requestHeader, as built-in gates do). */
function headerGate(seen: GateContext[]) {
  return (req: unknown, context: GateContext): GateDecision => {
    seen.push(context);
    const verdict = (requestHeader(req, 'X-Verdict') ?? 'allow') as GateDecision['verdict'];
    return verdict === 'challenge' ? { verdict, challenge: { kind: 'test', puzzle: [1, 2, 3] } } : { verdict };
  };
}

export function describeGate(name: string, startApp: AppFactory): void {
  async function setup(shadowSecret?: string) {
    const queue = new WaitingQueue({ store: new MemoryStore(), admitRatePerSecond: 10 });
    const seen: GateContext[] = [];
    const app = await startApp({
      queue,
      settle: 'auto',
      onOrder: () => undefined,
      routes: { gate: headerGate(seen), ...(shadowSecret ? { shadowSecret } : {}) },
    });
    const call = (method: string, path: string, headers: Record<string, string>) => send(app, path, { method, headers });
    return { queue, app, seen, call };
  }

  describe(`gate: ${name}`, () => {
    it('allow: enters as usual, and the gate is told the member and the pressure', async () => {
      const { queue, app, seen, call } = await setup();
      try {
        const response = await call('POST', '/queue/enter', { 'x-member': '42', 'x-verdict': 'allow' });
        expect(response.status).toBe(200);
        expect(((await response.json()) as Position).status).toBe('WAITING');
        expect(seen).toHaveLength(1);
        expect(seen[0]!.memberId).toBe('42');
        expect(seen[0]!.pressure).toBeGreaterThan(0); // one arrival over a rate of 10/s
        expect((await queue.stats()).waiting).toBe(1);
      } finally {
        await app.close();
      }
    });

    it('challenge: 401 CHALLENGE_REQUIRED with the challenge in the body, nothing written', async () => {
      const { queue, app, call } = await setup();
      try {
        const response = await call('POST', '/queue/enter', { 'x-member': 'bot', 'x-verdict': 'challenge' });
        expect(response.status).toBe(401);
        expect(response.headers.get('cache-control')).toBe('no-store');
        const body = (await response.json()) as { error: { code: string; message: string; challenge: unknown } };
        expect(body.error.code).toBe('CHALLENGE_REQUIRED');
        expect(typeof body.error.message).toBe('string');
        expect(body.error.challenge).toEqual({ kind: 'test', puzzle: [1, 2, 3] });
        const stats = await queue.stats();
        expect(stats.waiting).toBe(0);
        expect(stats.totals.entered).toBe(0);
        expect((await queue.position('bot')).status).toBe('NOT_ENTERED');
      } finally {
        await app.close();
      }
    });

    it('shadow: an ordinary WAITING position, nothing written, counted; later polls stay shadowed and never reach the head', async () => {
      const { queue, app, call } = await setup();
      try {
        await call('POST', '/queue/enter', { 'x-member': 'early', 'x-verdict': 'allow' });
        const response = await call('POST', '/queue/enter', { 'x-member': 'bot', 'x-verdict': 'shadow' });
        expect(response.status).toBe(200);
        expect(response.headers.get('cache-control')).toBe('no-store');
        const shadow = (await response.json()) as Position;
        expect(shadow).toMatchObject({ status: 'WAITING', entryToken: null, entryTokenExpiresAt: null, queueMode: 'open' });
        expect(shadow.rank).toBeGreaterThanOrEqual(1);
        expect(shadow.currentTotalWaitingCount).toBeGreaterThan(shadow.rank!);
        expect(shadow.estimatedWaitSeconds).toBeGreaterThanOrEqual(1);
        expect(response.headers.get('retry-after')).toBe(String(shadow.pollingIntervalSeconds));
        expect(Object.keys(shadow).sort()).toEqual(Object.keys(await queue.position('early')).sort());
        const stats = await queue.stats();
        expect(stats.waiting).toBe(1);
        expect(stats.totals.entered).toBe(1);
        expect(stats.totals.shadowed).toBe(1);
        // A real member entering after the shadowed one is not behind it.
        const later = (await (await call('POST', '/queue/enter', { 'x-member': 'human', 'x-verdict': 'allow' })).json()) as Position;
        expect(later.rank).toBe(1);
        for (let i = 0; i < 5; i++) await queue.admit();
        expect((await queue.position('human')).status).toBe('READY');
        const poll = await call('GET', '/queue/position', { 'x-member': 'bot' });
        expect(poll.status).toBe(200);
        const polled = (await poll.json()) as Position;
        expect(polled.status).toBe('WAITING');
        expect(polled.rank).toBeGreaterThanOrEqual(1);
        expect((await queue.position('bot')).status).toBe('NOT_ENTERED');
        // Its event stream is refused as a full instance refuses one (it polls its shadow place instead).
        const stream = await call('GET', '/queue/events', { 'x-member': 'bot' });
        expect(stream.status).toBe(503);
        expect(((await stream.json()) as { error: { code: string } }).error.code).toBe('TOO_MANY_STREAMS');
        expect(stream.headers.get('retry-after')).not.toBeNull();
        // Entering again keeps the shadow place, without asking the gate to let it in.
        const again = (await (await call('POST', '/queue/enter', { 'x-member': 'bot', 'x-verdict': 'allow' })).json()) as Position;
        expect(again.status).toBe('WAITING');
        expect((await queue.stats()).totals.shadowed).toBe(1);
        const left = await call('DELETE', '/queue', { 'x-member': 'bot' });
        expect(left.status).toBe(204);
      } finally {
        await app.close();
      }
    });

    it('a bad member id is 400 INVALID_MEMBER_ID on the event stream too, as on the position route (never a 500)', async () => {
      const { app, call } = await setup();
      try {
        const tooLong = 'x'.repeat(129);
        const position = await call('GET', '/queue/position', { 'x-member': tooLong });
        expect(position.status).toBe(400);
        const stream = await call('GET', '/queue/events', { 'x-member': tooLong });
        expect(stream.status).toBe(400);
        expect(((await stream.json()) as { error: { code: string } }).error.code).toBe('INVALID_MEMBER_ID');
      } finally {
        await app.close();
      }
    });

    it('a shadowed member is recognised by another instance from its signed cookie; a forged cookie is not', async () => {
      const secret = 'a shared shadow secret of the app';
      const one = await setup(secret);
      const two = await setup(secret);
      try {
        const response = await one.call('POST', '/queue/enter', { 'x-member': 'bot', 'x-verdict': 'shadow' });
        const cookie = response.headers.get('set-cookie')!.split(';')[0]!;
        expect(cookie).toMatch(/^waitgate_place=/);
        // A forged mark first (instance two then knows nothing of the member).
        const forged = cookie.replace(/\.(\d+)\./, (_m, rank: string) => `.${Number(rank) + 1}.`);
        const refused = await two.call('GET', '/queue/position', { 'x-member': 'bot', cookie: forged });
        expect(((await refused.json()) as Position).status).toBe('NOT_ENTERED');
        const otherMember = await two.call('GET', '/queue/position', { 'x-member': 'someone', cookie });
        expect(((await otherMember.json()) as Position).status).toBe('NOT_ENTERED');
        const elsewhere = await two.call('GET', '/queue/position', { 'x-member': 'bot', cookie });
        expect(((await elsewhere.json()) as Position).status).toBe('WAITING');
      } finally {
        await one.app.close();
        await two.app.close();
      }
    });

    it('a gate answering something else is the server’s mistake: 500 CONFIG_INVALID, nothing written', async () => {
      const queue = new WaitingQueue({ store: new MemoryStore() });
      const app = await startApp({ queue, settle: 'auto', onOrder: () => undefined, routes: { gate: () => ({ verdict: 'maybe' }) as never } });
      try {
        const response = await send(app, '/queue/enter', { method: 'POST', headers: { 'x-member': 'a' } });
        expect(response.status).toBe(500);
        expect((await queue.stats()).waiting).toBe(0);
      } finally {
        await app.close();
      }
    });

    it('identity: another member id of the same identity gets 409 IDENTITY_LIMIT and writes nothing; a shadowed member is not asked', async () => {
      const queue = new WaitingQueue({ store: new MemoryStore() });
      const asked: string[] = [];
      const identity = async (req: unknown) => {
        asked.push(requestHeader(req, 'x-member') ?? '');
        return requestHeader(req, 'x-identity');
      };
      const app = await startApp({ queue, settle: 'auto', onOrder: () => undefined, routes: { gate: headerGate([]), identity } });
      const call = (headers: Record<string, string>) => send(app, '/queue/enter', { method: 'POST', headers });
      try {
        expect((await call({ 'x-member': 'a1', 'x-identity': 'alice' })).status).toBe(200);
        const refused = await call({ 'x-member': 'a2', 'x-identity': 'alice' });
        expect(refused.status).toBe(409);
        expect(refused.headers.get('cache-control')).toBe('no-store');
        const body = (await refused.json()) as { error: { code: string; message: string } };
        expect(body.error.code).toBe('IDENTITY_LIMIT');
        expect(body.error.message).toEqual(expect.any(String));
        expect((await queue.stats()).totals.entered).toBe(1);
        expect((await queue.position('a2')).status).toBe('NOT_ENTERED');
        // The member holding the place enters again as before; no identity, no limit.
        expect((await call({ 'x-member': 'a1', 'x-identity': 'alice' })).status).toBe(200);
        expect((await call({ 'x-member': 'b' })).status).toBe(200);
        // Shadowed or challenged: the gate answered, the identity is never asked.
        expect((await call({ 'x-member': 'bot', 'x-identity': 'alice', 'x-verdict': 'shadow' })).status).toBe(200);
        expect((await call({ 'x-member': 'bot2', 'x-identity': 'alice', 'x-verdict': 'challenge' })).status).toBe(401);
        expect(asked).toEqual(['a1', 'a2', 'a1', 'b']);
        expect((await queue.stats()).waiting).toBe(2);
      } finally {
        await app.close();
      }
    });
  });
}
