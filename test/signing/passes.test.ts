// Signed entry passes (SPEC §15) on the core: the option, the pass a member gets, the claim by
// its jti (once), refusals before any store call, rotation, and verifyEntryPass's reasons.

import { generateKeyPairSync } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { describe, expect, it, vi } from 'vitest';
import { EntryTokenError, MemoryStore, WaitgateConfigError, WaitingQueue, type Store } from '../../src/index.js';
import { verifyEntryPass, type EntryPassKeys } from '../../src/pass/index.js';
import { privateKeyPem, signPass, signingWith } from '../support/signing-keys.js';
import { storeWith } from '../support/store-with.js';

/** A MemoryStore that counts its calls. */
function countingStore(clock?: () => number): { store: Store; calls: string[] } {
  const memory = new MemoryStore(clock ? { now: clock } : {});
  const calls: string[] = [];
  const store = new Proxy(memory, {
    get(target, prop) {
      const value = Reflect.get(target, prop) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(String(prop));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, calls };
}

async function admitted(queue: WaitingQueue, member: string): Promise<string> {
  await queue.enter(member);
  await queue.admit();
  return (await queue.token(member))!.entryToken;
}

describe('the signing option', () => {
  it.each([
    [{ keys: [] }, 'signing.keys'],
    [{ keys: [{ kid: 'a', privateKey: 'not a pem' }] }, 'signing.keys.0.privateKey'],
    [{ keys: [{ kid: '', privateKey: privateKeyPem() }] }, 'signing.keys.0.kid'],
    [
      {
        keys: [
          { kid: 'a', privateKey: privateKeyPem() },
          { kid: 'a', privateKey: privateKeyPem() },
        ],
      },
      'signing.keys.1.kid',
    ],
    [{ keys: [{ kid: 'a', privateKey: privateKeyPem(), extra: 1 }] }, 'extra'],
    [{ keys: [{ kid: 'a', privateKey: privateKeyPem() }], secret: 'x' }, 'secret'],
  ])('refuses %j naming %s', (signing, option) => {
    const error = (() => {
      try {
        new WaitingQueue({ store: new MemoryStore(), signing: signing as never });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(WaitgateConfigError);
    expect((error as WaitgateConfigError).option).toBe(option);
  });

  it('refuses an RSA key, a P-384 key and a public key', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    const pub = generateKeyPairSync('ed25519').publicKey.export({ format: 'pem', type: 'spki' }) as string;
    for (const privateKey of [rsa, p384, pub]) {
      expect(() => new WaitingQueue({ store: new MemoryStore(), signing: { keys: [{ kid: 'a', privateKey }] } })).toThrow(/signing\.keys\.0\.privateKey/);
    }
  });

  it('takes a private JWK, and never shows the keys in queue.config', () => {
    const jwk = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
    const queue = new WaitingQueue({ store: new MemoryStore(), signing: { keys: [{ kid: 'j', privateKey: jwk as Record<string, unknown> }] } });
    expect(queue.jwks().keys).toEqual([expect.objectContaining({ kty: 'OKP', crv: 'Ed25519', kid: 'j', alg: 'EdDSA', use: 'sig' })]);
    expect(queue.jwks().keys[0]).not.toHaveProperty('d');
    expect(JSON.stringify(queue.config)).not.toContain(String(jwk.d));
  });

  it('without signing: opaque tokens, and an empty key set', async () => {
    const queue = new WaitingQueue({ store: new MemoryStore() });
    expect(await admitted(queue, 'm')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(queue.jwks()).toEqual({ keys: [] });
  });
});

describe.each(['ES256', 'EdDSA'] as const)('a signed pass (%s)', (alg) => {
  it('is a compact JWS with the claims of §15, the same from admit, position and token', async () => {
    const queue = new WaitingQueue({ store: new MemoryStore(), name: 'drop', entryTokenTtlSeconds: 120, signing: signingWith('2026-12', alg) });
    await queue.enter('m1');
    const [admission] = await queue.admit();
    const position = await queue.position('m1');
    expect(position.entryToken).toBe(admission!.entryToken);
    const pass = admission!.entryToken;
    expect(decodeProtectedHeader(pass)).toEqual({ alg, kid: '2026-12', typ: 'JWT' });
    const claims = decodeJwt(pass);
    expect(claims).toMatchObject({ iss: 'waitgate', aud: 'drop', sub: 'm1', exp: Math.floor(admission!.expiresAt / 1000) });
    expect(claims.jti).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(claims.exp! - claims.iat!).toBeGreaterThanOrEqual(119);
    expect(claims.nbf).toBe(claims.iat);
    const verified = await verifyEntryPass(pass, { keys: queue.jwks(), queue: 'drop', memberId: 'm1' });
    expect(verified).toEqual({ valid: true, memberId: 'm1', tokenId: claims.jti, expiresAt: claims.exp! * 1000 });
  });

  it('is claimed by its jti (all the store sees), consumed once, and refused after', async () => {
    const memory = new MemoryStore();
    const seen: string[] = [];
    const store = storeWith(memory, { claim: (q: string, r: { token: string }) => (seen.push(r.token), memory.claim(q, r as never)) });
    const queue = new WaitingQueue({ store, signing: signingWith('k', alg) });
    const pass = await admitted(queue, 'm1');
    const claim = await queue.claim('m1', pass);
    expect(seen).toEqual([decodeJwt(pass).jti]);
    expect(claim.tokenId).toMatch(/^[0-9a-f]{32}$/);
    expect(await queue.consume(claim)).toBe(true);
    await expect(queue.claim('m1', pass)).rejects.toMatchObject({ code: 'INVALID' });
    expect(seen).toHaveLength(2);
  });

  it('signed by jose elsewhere (another instance, the same key) is checked and claimed here', async () => {
    const signing = signingWith('k', alg);
    const store = new MemoryStore();
    const admitting = new WaitingQueue({ store, name: 'drop', signing });
    const ordering = new WaitingQueue({ store, name: 'drop', signing });
    const pass = await admitted(admitting, 'm1');
    const claims = decodeJwt(pass);
    // The same claims signed by jose with the key: what another implementation would issue.
    const { importPKCS8, SignJWT } = await import('jose');
    const joseSigned = await new SignJWT(claims).setProtectedHeader({ alg, kid: 'k', typ: 'JWT' }).sign(await importPKCS8(signing.keys[0]!.privateKey, alg));
    // EdDSA is deterministic: the same bytes as ours, which shows the encoding is jose's.
    if (alg === 'EdDSA') expect(joseSigned).toBe(pass);
    const claim = await ordering.claim('m1', joseSigned);
    expect(await ordering.consume(claim)).toBe(true);
  });
});

describe('a forged pass sent again and again', () => {
  it('is refused every time (its refusal remembered), and a good pass beside it still passes', async () => {
    const store = new MemoryStore();
    const queue = new WaitingQueue({ store, name: 'drop', signing: signingWith('k') });
    const forged = await admitted(new WaitingQueue({ store: new MemoryStore(), name: 'drop', signing: signingWith('k') }), 'm1');
    const [head, body, signature] = forged.split('.') as [string, string, string];
    const shortSignature = `${head}.${body}.${signature.slice(0, 20)}`; // node:crypto throws on it; refused all the same
    for (let i = 0; i < 3; i++) {
      for (const bad of [forged, shortSignature]) await expect(queue.claim('m1', bad)).rejects.toMatchObject({ code: 'INVALID' });
    }
    const pass = await admitted(queue, 'm1');
    expect(await queue.consume(await queue.claim('m1', pass))).toBe(true);
  });
});

describe('passes refused before any store call', () => {
  it('forged, expired, other-queue, other-member, opaque and garbage passes: INVALID with no store call', async () => {
    const now = Date.now();
    const { store, calls } = countingStore(() => now);
    const signing = signingWith('k');
    const queue = new WaitingQueue({ store, name: 'drop', entryTokenTtlSeconds: 60, signing });
    const pass = await admitted(queue, 'm1');
    const other = await admitted(new WaitingQueue({ store: new MemoryStore({ now: () => now }), name: 'other', signing }), 'm1');
    const forger = await admitted(new WaitingQueue({ store: new MemoryStore({ now: () => now }), name: 'drop', signing: signingWith('k') }), 'm1');
    const [head, body] = pass.split('.');
    const tampered = `${head}.${Buffer.from(JSON.stringify({ ...decodeJwt(pass), sub: 'm2' })).toString('base64url')}.${pass.split('.')[2]}`;
    calls.length = 0;
    for (const [member, bad] of [
      ['m1', forger],
      ['m2', tampered],
      ['m1', other],
      ['m2', pass],
      ['m1', decodeJwt(pass).jti as string],
      ['m1', `${head}.${body}.`],
      ['m1', 'x'.repeat(5000)],
    ] as const) {
      const error = await queue.claim(member, bad).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EntryTokenError);
      expect((error as EntryTokenError).code).toBe('INVALID');
    }
    // The queue checks a pass on this instance's clock (the store's clock is a store call away).
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(now + 66_000);
      await expect(queue.claim('m1', pass)).rejects.toMatchObject({ code: 'INVALID' });
      vi.setSystemTime(now);
      expect(calls).toEqual([]);
      await queue.claim('m1', pass);
      expect(calls).toEqual(['claim']);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('rotation', () => {
  it('the first key signs, every key listed verifies; a removed key no longer verifies', async () => {
    const store = new MemoryStore();
    const old = { kid: 'old', privateKey: privateKeyPem('EdDSA') };
    const fresh = { kid: 'new', privateKey: privateKeyPem('ES256') };
    const before = new WaitingQueue({ store, signing: { keys: [old] } });
    const oldPass = await admitted(before, 'a');
    const during = new WaitingQueue({ store, signing: { keys: [fresh, old] } });
    expect(during.jwks().keys.map((k) => k.kid)).toEqual(['new', 'old']);
    const newPass = await admitted(during, 'b');
    expect(decodeProtectedHeader(newPass).kid).toBe('new');
    expect(await during.consume(await during.claim('a', oldPass))).toBe(true);
    const after = new WaitingQueue({ store, signing: { keys: [fresh] } });
    expect(await verifyEntryPass(oldPass, { keys: after.jwks(), queue: 'default' })).toEqual({ valid: false, reason: 'UNKNOWN_KEY' });
    expect(await after.consume(await after.claim('b', newPass))).toBe(true);
  });
});

describe('verifyEntryPass', () => {
  const NOW = 1_800_000_000_000;
  const pem = privateKeyPem('ES256');
  const queue = new WaitingQueue({
    store: new MemoryStore({ now: () => NOW }),
    name: 'drop',
    entryTokenTtlSeconds: 300,
    signing: { keys: [{ kid: 'k', privateKey: pem }] },
  });
  const keys: EntryPassKeys = queue.jwks();
  const options = { keys, queue: 'drop', now: NOW };
  const sign = (claims: Record<string, unknown>, header?: Record<string, unknown>) => signPass(pem, claims, header);
  const base = { iss: 'waitgate', aud: 'drop', sub: 'm1', jti: 'a'.repeat(43), iat: NOW / 1000, nbf: NOW / 1000, exp: NOW / 1000 + 300 };

  it('accepts a pass of the queue, with the member, at a Date, and keys from a function', async () => {
    const pass = await admitted(queue, 'm1');
    const expected = { valid: true, memberId: 'm1', tokenId: decodeJwt(pass).jti, expiresAt: decodeJwt(pass).exp! * 1000 };
    expect(await verifyEntryPass(pass, options)).toEqual(expected);
    expect(await verifyEntryPass(pass, { ...options, memberId: 'm1', now: new Date(NOW + 1000) })).toEqual(expected);
    expect(await verifyEntryPass(pass, { ...options, keys: async () => keys })).toEqual(expected);
  });

  it.each([
    ['MALFORMED', () => Promise.resolve('not.a.jws')],
    ['MALFORMED', () => Promise.resolve(42)],
    ['MALFORMED', () => sign({ ...base, iss: 'someone' })],
    ['MALFORMED', () => sign({ ...base, jti: undefined })],
    ['MALFORMED', () => sign({ ...base, exp: 'soon' })],
    ['BAD_SIGNATURE', async () => (await sign(base)).replace(/.{4}$/, 'AAAA')],
    ['BAD_SIGNATURE', async () => `${Buffer.from('{"alg":"none","kid":"k"}').toString('base64url')}.${(await sign(base)).split('.')[1]}.`],
    ['UNKNOWN_KEY', () => sign(base, { alg: 'ES256', kid: 'other' })],
    ['EXPIRED', () => sign({ ...base, exp: NOW / 1000 })],
    ['NOT_YET_VALID', () => sign({ ...base, nbf: NOW / 1000 + 10 })],
    ['WRONG_QUEUE', () => sign({ ...base, aud: 'another' })],
    ['WRONG_MEMBER', () => sign({ ...base, sub: 'm2' })],
  ] as const)('answers %s', async (reason, make) => {
    expect(await verifyEntryPass(await make(), { ...options, memberId: 'm1' })).toEqual({ valid: false, reason });
  });

  it('clockToleranceSeconds lets a pass a little early or late through', async () => {
    const early = await sign({ ...base, nbf: NOW / 1000 + 10 });
    const late = await sign({ ...base, exp: NOW / 1000 - 10 });
    for (const pass of [early, late]) expect(await verifyEntryPass(pass, { ...options, clockToleranceSeconds: 11 })).toMatchObject({ valid: true });
  });

  it('throws WaitgateConfigError for bad options', async () => {
    const pass = await sign(base);
    for (const bad of [
      { ...options, keys: {} },
      { ...options, queue: '' },
      { ...options, now: Number.NaN },
      { ...options, clockToleranceSeconds: -1 },
    ]) {
      await expect(verifyEntryPass(pass, bad as never)).rejects.toBeInstanceOf(WaitgateConfigError);
    }
  });
});
