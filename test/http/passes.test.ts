// Signed entry passes through every adapter (SPEC §15), on the MemoryStore: the JWKS route, the
// round trip (enter -> READY -> order -> consumed -> reuse 401), and passes refused with no store call.
// test/store/redis-passes.test.ts checks the same refusals cost a real Redis no command.

import { decodeJwt } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore, WaitingQueue, type Position, type Store } from '../../src/index.js';
import { signingWith } from '../support/signing-keys.js';
import { PASS_APPS, type PassApp } from './pass-apps.js';

/** A MemoryStore that records the name of every call. */
function countingStore(): { store: Store; calls: string[] } {
  const memory = new MemoryStore();
  const calls: string[] = [];
  const store = new Proxy(memory, {
    get(target, prop) {
      const value = Reflect.get(target, prop) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => (calls.push(String(prop)), (value as (...a: unknown[]) => unknown).apply(target, args));
    },
  });
  return { store, calls };
}

let app: PassApp | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await app?.close();
  app = undefined;
});

async function expectRefused(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(((await response.json()) as { error: { code: string } }).error.code).toBe(code);
}

describe.each(Object.keys(PASS_APPS))('signed passes on %s', (name) => {
  const start = async (queue: WaitingQueue, session?: Parameters<(typeof PASS_APPS)[string]>[1]) => (app = await PASS_APPS[name]!(queue, session));
  const call = (method: string, path: string, headers: Record<string, string> = {}) => fetch(app!.url + path, { method, headers });

  it('serves the public JWKS at <prefix>/.well-known/jwks.json, cacheable, with no member', async () => {
    const queue = new WaitingQueue({ store: new MemoryStore(), signing: { keys: [...signingWith('new').keys, ...signingWith('old', 'EdDSA').keys] } });
    await start(queue);
    const response = await call('GET', '/queue/.well-known/jwks.json');
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('public, max-age=300');
    expect(await response.json()).toEqual(queue.jwks());
    expect(queue.jwks().keys.map((k) => k.kid)).toEqual(['new', 'old']);
  });

  it('round trip: enter -> READY with a pass -> order -> consumed -> the same pass again is 401', async () => {
    const queue = new WaitingQueue({ store: new MemoryStore(), name: 'drop', signing: signingWith() });
    await start(queue);
    expect(((await (await call('POST', '/queue/enter', { 'x-member': 'alice' })).json()) as Position).status).toBe('WAITING');
    await queue.admit();
    const position = (await (await call('GET', '/queue/position', { 'x-member': 'alice' })).json()) as Position;
    expect(position.status).toBe('READY');
    const pass = position.entryToken!;
    expect(decodeJwt(pass)).toMatchObject({ iss: 'waitgate', aud: 'drop', sub: 'alice' });
    const order = await call('POST', '/orders', { 'x-member': 'alice', 'x-entry-token': pass });
    expect(order.status).toBe(201);
    expect(((await order.json()) as { tokenId: string }).tokenId).toMatch(/^[0-9a-f]{32}$/);
    await expect.poll(async () => (await queue.position('alice')).status).toBe('NOT_ENTERED');
    await expectRefused(await call('POST', '/orders', { 'x-member': 'alice', 'x-entry-token': pass }), 401, 'ENTRY_TOKEN_INVALID');
  });

  it('forged, expired, other-queue and other-member passes: 401 ENTRY_TOKEN_INVALID with no store call', async () => {
    const { store, calls } = countingStore();
    const signing = signingWith();
    const queue = new WaitingQueue({ store, name: 'drop', entryTokenTtlSeconds: 60, signing });
    await start(queue);
    const passOf = async (q: WaitingQueue, member: string) => (await q.enter(member), (await q.admit())[0]!.entryToken);
    const pass = await passOf(queue, 'alice');
    const forged = await passOf(new WaitingQueue({ store: new MemoryStore(), name: 'drop', signing: signingWith() }), 'alice');
    const otherQueue = await passOf(new WaitingQueue({ store: new MemoryStore(), name: 'other', signing }), 'alice');
    calls.length = 0;
    for (const [member, token] of [
      ['alice', forged],
      ['alice', otherQueue],
      ['bob', pass],
    ]) {
      await expectRefused(await call('POST', '/orders', { 'x-member': member!, 'x-entry-token': token! }), 401, 'ENTRY_TOKEN_INVALID');
    }
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 70_000 });
    await expectRefused(await call('POST', '/orders', { 'x-member': 'alice', 'x-entry-token': pass }), 401, 'ENTRY_TOKEN_INVALID');
    vi.useRealTimers();
    expect(calls).toEqual([]);
  });

  it('requireEntryPass admits twice without claiming; after revoke (checkRevoked) it refuses, at one store read each', async () => {
    const { store, calls } = countingStore();
    const queue = new WaitingQueue({ store, signing: signingWith() });
    await start(queue, { checkRevoked: true });
    await queue.enter('alice');
    const [admission] = await queue.admit();
    const pass = admission!.entryToken;
    calls.length = 0;
    for (let i = 0; i < 2; i++) {
      const response = await call('GET', '/checkout', { 'x-member': 'alice', 'x-entry-token': pass });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ memberId: 'alice', tokenId: decodeJwt(pass).jti, expiresAt: decodeJwt(pass).exp! * 1000 });
    }
    expect(calls).toEqual(['revokedAt', 'revokedAt']);
    expect((await queue.stats()).claimed).toBe(0);
    await expectRefused(await call('GET', '/checkout', { 'x-member': 'bob', 'x-entry-token': pass }), 401, 'ENTRY_TOKEN_INVALID');
    await expectRefused(await call('GET', '/checkout', { 'x-member': 'alice' }), 401, 'ENTRY_TOKEN_MISSING');
    await expectRefused(await call('GET', '/checkout', { 'x-entry-token': pass }), 401, 'UNAUTHENTICATED');
    expect(await queue.revoke('alice')).toBe(true);
    await expectRefused(await call('GET', '/checkout', { 'x-member': 'alice', 'x-entry-token': pass }), 401, 'ENTRY_TOKEN_INVALID');
    await expectRefused(await call('POST', '/orders', { 'x-member': 'alice', 'x-entry-token': pass }), 401, 'ENTRY_TOKEN_INVALID');
  });

  it('without checkRevoked no store call; sessionSeconds sets how long a pass admits', async () => {
    const { store, calls } = countingStore();
    const queue = new WaitingQueue({ store, entryTokenTtlSeconds: 60, signing: signingWith() });
    await start(queue, { sessionSeconds: 600 });
    await queue.enter('alice');
    const pass = (await queue.admit())[0]!.entryToken;
    calls.length = 0;
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 120_000 });
    const late = await call('GET', '/checkout', { 'x-member': 'alice', 'x-entry-token': pass });
    expect(late.status).toBe(200);
    expect(((await late.json()) as { expiresAt: number }).expiresAt).toBe((decodeJwt(pass).iat! + 600) * 1000);
    vi.setSystemTime(Date.now() + 600_000);
    await expectRefused(await call('GET', '/checkout', { 'x-member': 'alice', 'x-entry-token': pass }), 401, 'ENTRY_TOKEN_INVALID');
    vi.useRealTimers();
    expect(calls).toEqual([]);
  });
});
