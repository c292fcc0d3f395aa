// S1–S6: hostile input, through the public API (WaitingQueue on RedisStore) and through
// each HTTP adapter. Every case ends in a clear 4xx (400/401/409/431) or a typed error
// (InvalidMemberIdError / EntryTokenError), never a 500 or a crash. Input that is refused
// runs no script (INFO commandstats: EVAL/EVALSHA calls unchanged) and writes no key
// (every key under the test prefix, with its content, unchanged). Valid but strange ids
// (braces, colons, globs, unicode, numbers) are hash fields and zset members, never key
// names: a queue keeps its fixed key set under `{prefix:name}` whatever its members.

import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EntryTokenError, InvalidMemberIdError, RedisStore, WaitingQueue, type Claim, type MemberId } from '../../src/index.js';
import { queueKeys } from '../../src/store/keys.js';
import { ADAPTERS, encodeMember, errorCode, keysUnder, scriptCalls, send, snapshot, startApp, type RunningApp } from '../support/hostile-apps.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

let server: RedisServer;
let client: Redis; // the library's connection
let admin: Redis; // the test's probes (INFO, SCAN): never runs a script

beforeAll(async () => {
  server = await startRedisServer();
  client = new Redis(server.url, { maxRetriesPerRequest: 1 });
  admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  client?.disconnect();
  admin?.disconnect();
  await server?.stop();
});

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;
const SHAPED_TOKEN = 'A'.repeat(43);
const SHAPED_CLAIM_ID = 'C'.repeat(22);
/** The key kinds of one queue (src/store/keys.ts): the whole set, whatever the members. */
const FIXED_KEYS = Object.keys(queueKeys('p', 'q')).sort();

/** Runs `body` and checks it ran `scripts` scripts and left every key under `prefix` as it was. */
async function expectUntouched(prefix: string, body: () => Promise<void>, scripts: number | 'any' = 0): Promise<void> {
  const calls = await scriptCalls(admin);
  const before = await snapshot(admin, prefix);
  await body();
  if (scripts !== 'any') expect((await scriptCalls(admin)) - calls, 'scripts run').toBe(scripts);
  expect(await snapshot(admin, prefix), 'keys written').toEqual(before);
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

// Without abandonment: its presence flushes (one script call a second after valid polls) would
// land in a later test's count of scripts run, which must be 0 for hostile input.
const queueOn = (prefix: string, name = 'orders') =>
  new WaitingQueue({ store: new RedisStore({ client, prefix }), name, admitRatePerSecond: 1000, admitBurst: 50, abandonAfterSeconds: null });

// ---------------------------------------------------------------------------------------
// Generators.

const CONTROLS = [...Array.from({ length: 0x20 }, (_, i) => i), ...Array.from({ length: 0x21 }, (_, i) => 0x7f + i)].map((c) => String.fromCharCode(c));
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const hasControl = (s: string) => /[\u0000-\u001f\u007f-\u009f]/.test(s);

/** Member ids the SPEC refuses: InvalidMemberIdError before any store call. */
const invalidMemberId: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(''),
  // a control character (NUL, CR, LF, TAB, ESC, DEL, C1 …) anywhere in an otherwise fine id
  fc
    .tuple(fc.string({ unit: 'binary', maxLength: 30 }), fc.constantFrom(...CONTROLS), fc.string({ unit: 'binary', maxLength: 30 }))
    .map(([a, c, b]) => a + c + b),
  fc.constantFrom('a\r\nb', 'a\u0000b', '\r\n', 'line\n', '\u0000', 'tab\there', 'x\u007f', 'x\u0085', 'HTTP/1.1 200 OK\r\nSet-Cookie: a=b'),
  // too long: 129 code points up to 10 KB
  fc.string({ unit: 'grapheme-ascii', minLength: 129, maxLength: 600 }),
  fc.constantFrom('x'.repeat(129), 'x'.repeat(10_240), '🙂'.repeat(129), '{'.repeat(10_240)),
  // numbers that are not non-negative safe integers
  fc.double().filter((x) => !(Number.isSafeInteger(x) && x >= 0)),
  fc.constantFrom(-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 2 ** 53, -(2 ** 53), Number.MAX_VALUE, Number.EPSILON),
  // neither a string nor a number
  fc.constantFrom<unknown>(null, undefined, true, false, {}, [], ['a'], { id: 'a' }, 1n, new String('a'), new Number(1), () => 'a', Symbol('a')),
);

/** The ids above that can cross HTTP in the apps' tagged JSON (no bigint, function, symbol, boxed value). */
const invalidMemberIdOverHttp = invalidMemberId.filter(
  (v) => !['bigint', 'function', 'symbol'].includes(typeof v) && !(v instanceof String) && !(v instanceof Number),
);

/** Ids a user may have: 1–128 code points without control characters, or non-negative safe integers. */
const HAND_PICKED_IDS: readonly MemberId[] = [
  '{braces}',
  '}{',
  '{waitgate:orders}:waiting',
  '{}',
  'a:b:c',
  ':',
  '*',
  '?',
  '[a-z]*',
  '\\*',
  '%d+|.*',
  'a|b|c',
  '"quoted"',
  "it's",
  ' ',
  'with space',
  'ünïcødé-✓',
  '🙂',
  '🙂'.repeat(128),
  'x'.repeat(128),
  '١٢٣',
  '７',
  'e\u0301',
  '\u00e9',
  '\u200b',
  '\ufeff',
  '\u2028',
  'nil',
  'false',
  '0',
  '007',
  '7.0',
  '-1',
  0,
  7,
  Number.MAX_SAFE_INTEGER,
];
const validMemberId: fc.Arbitrary<MemberId> = fc.oneof(
  fc.string({ unit: 'binary', minLength: 1, maxLength: 128 }).filter((s) => !hasControl(s)),
  fc.stringMatching(/^[{}:*?[\]\\|%. -]{1,40}$/),
  fc.constantFrom(...HAND_PICKED_IDS),
  fc.nat({ max: Number.MAX_SAFE_INTEGER }),
);
/** The one string form the SPEC gives a member id. */
const canonical = (id: MemberId) => (typeof id === 'number' ? String(id) : id);

/** Tokens that cannot be ours (not 43 base64url characters), as strings. */
const BASE64URL = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'];
const malformedToken: fc.Arbitrary<string> = fc
  .oneof(
    fc.string({ unit: 'binary', minLength: 1, maxLength: 300 }),
    fc.string({ unit: fc.constantFrom(...BASE64URL), minLength: 1, maxLength: 120 }),
    fc
      .tuple(fc.string({ unit: fc.constantFrom(...BASE64URL), minLength: 42, maxLength: 42 }), fc.constantFrom('=', '+', '/', ' ', '.', '\n', 'é', '\u0000'))
      .map(([a, c]) => a + c),
    fc.constantFrom(
      'A'.repeat(42),
      'A'.repeat(44),
      'A'.repeat(5_000),
      `${'A'.repeat(43)}=`,
      `Bearer ${'A'.repeat(43)}`,
      'null',
      'undefined',
      '[object Object]',
    ),
  )
  .filter((t) => !TOKEN_SHAPE.test(t));

// ---------------------------------------------------------------------------------------

describe('hostile input through the public API (WaitingQueue on RedisStore)', () => {
  it('refuses invalid member ids in every method with InvalidMemberIdError, before any script or key (S5)', async () => {
    const prefix = `api-bad-id-${randomBytes(3).toString('hex')}`;
    const queue = queueOn(prefix);
    await queue.enter('resident'); // a queue that exists, so "no key written" means its content too
    const claim = (memberId: unknown): Claim => ({ memberId: memberId as string, claimId: SHAPED_CLAIM_ID, tokenId: '0'.repeat(32), expiresAt: 0 });
    await fc.assert(
      fc.asyncProperty(fc.array(invalidMemberId, { minLength: 1, maxLength: 4 }), async (ids) => {
        await expectUntouched(prefix, async () => {
          for (const id of ids) {
            const memberId = id as MemberId;
            for (const call of [
              () => queue.enter(memberId),
              () => queue.position(memberId),
              () => queue.state(memberId),
              () => queue.token(memberId),
              () => queue.leave(memberId),
              () => queue.claim(memberId, SHAPED_TOKEN),
              () => queue.claim(memberId, ''),
              () => queue.consume(claim(id)),
              () => queue.release(claim(id)),
            ]) {
              const error = await rejection(call());
              expect(error).toBeInstanceOf(InvalidMemberIdError);
              const message = (error as Error).message;
              expect(message.length).toBeLessThan(200); // a 10 KB id is not echoed back
              if (typeof id === 'string' && id.length >= 8) expect(message).not.toContain(id);
            }
          }
        });
      }),
      { numRuns: 120 },
    );
    expect((await queue.position('resident')).rank).toBe(0);
  });

  it('refuses malformed tokens with EntryTokenError before any script, and the real token still works (S1, S6)', async () => {
    const prefix = `api-bad-token-${randomBytes(3).toString('hex')}`;
    const queue = queueOn(prefix);
    await queue.enter('alice');
    const [alice] = await queue.admit();
    await fc.assert(
      fc.asyncProperty(fc.array(malformedToken, { minLength: 1, maxLength: 4 }), async (tokens) => {
        await expectUntouched(prefix, async () => {
          for (const token of tokens) {
            const error = await rejection(queue.claim('alice', token));
            expect(error).toBeInstanceOf(EntryTokenError);
            expect((error as EntryTokenError).code).toBe('INVALID');
            if (token.length >= 12) expect((error as Error).message).not.toContain(token); // no token in messages
          }
        });
      }),
      { numRuns: 150 },
    );
    await expectUntouched(prefix, async () => {
      for (const [token, code] of [
        ['', 'MISSING'],
        [null, 'MISSING'],
        [undefined, 'MISSING'],
        [` ${alice!.entryToken}`, 'INVALID'], // the API does not trim (the adapters do)
        [`${alice!.entryToken}\n`, 'INVALID'],
        [alice!.entryToken.toLowerCase() === alice!.entryToken ? alice!.entryToken.toUpperCase() + '!' : `${alice!.entryToken.slice(0, 42)}=`, 'INVALID'],
        [123, 'INVALID'],
        [{ toString: () => alice!.entryToken }, 'INVALID'],
        [[alice!.entryToken], 'INVALID'],
      ] as Array<[unknown, string]>) {
        const error = await rejection(queue.claim('alice', token as string));
        expect(error, JSON.stringify(token)).toBeInstanceOf(EntryTokenError);
        expect((error as EntryTokenError).code).toBe(code);
      }
      // Settling something that is not a claim we issued answers false (or, without a valid
      // member id, InvalidMemberIdError) without a store call.
      for (const bogus of [
        null,
        undefined,
        'claim',
        42,
        {},
        { claimId: SHAPED_CLAIM_ID },
        { memberId: 'alice' },
        { memberId: 'alice', claimId: 'short' },
        { memberId: 'alice', claimId: 'x'.repeat(5000) },
        { memberId: 'x'.repeat(5000), claimId: SHAPED_CLAIM_ID },
      ]) {
        for (const settle of [() => queue.consume(bogus as unknown as Claim), () => queue.release(bogus as unknown as Claim)]) {
          const outcome = await settle().catch((error: unknown) => error);
          if (outcome !== false) expect(outcome, JSON.stringify(bogus)?.slice(0, 80)).toBeInstanceOf(InvalidMemberIdError);
        }
      }
    });
    // No lockout: the member's own token is claimable after all that.
    expect((await queue.claim('alice', alice!.entryToken)).memberId).toBe('alice');
  });

  it("answers INVALID for another member's token, a consumed one, another queue's; writes nothing (S2, S3)", async () => {
    const prefix = `api-foreign-${randomBytes(3).toString('hex')}`;
    const queue = queueOn(prefix);
    const other = queueOn(prefix, 'other-sale');
    await queue.enter('alice');
    await queue.enter('bob');
    await other.enter('carol');
    const [alice, bob] = await queue.admit();
    const [carol] = await other.admit();
    const invalid = async (q: WaitingQueue, member: string, token: string) => {
      const error = await rejection(q.claim(member, token));
      expect(error).toBeInstanceOf(EntryTokenError);
      expect((error as EntryTokenError).code).toBe('INVALID');
    };
    await expectUntouched(
      prefix,
      async () => {
        await invalid(queue, 'bob', alice!.entryToken); // A's token with B's session
        await invalid(queue, 'alice', bob!.entryToken);
        await invalid(queue, 'carol', carol!.entryToken); // sale X's token at sale Y
        await invalid(queue, 'alice', carol!.entryToken);
        await invalid(queue, 'mallory', alice!.entryToken); // never entered
        await invalid(queue, 'alice', `${alice!.entryToken.slice(0, 42)}${alice!.entryToken.endsWith('A') ? 'B' : 'A'}`); // one character off
      },
      6, // each is a well-shaped token: the claim script looks, and refuses without writing
    );
    const claim = await queue.claim('alice', alice!.entryToken);
    expect(await queue.consume(claim)).toBe(true);
    await expectUntouched(
      prefix,
      async () => {
        await invalid(queue, 'alice', alice!.entryToken); // replay after consume
        expect(await queue.consume(claim)).toBe(true); // a repeated consume is idempotent...
        expect(await queue.release(claim)).toBe(false); // ...and a consumed claim cannot be released
        expect(await queue.consume({ ...claim, claimId: SHAPED_CLAIM_ID })).toBe(false); // a forged claim id
        expect(await queue.consume({ ...claim, memberId: 'bob', claimId: SHAPED_CLAIM_ID })).toBe(false);
        expect((await queue.position('alice')).status).toBe('NOT_ENTERED');
      },
      'any',
    );
    expect(await queue.state('bob')).toBe('READY');
  });

  it('keeps the fixed key set under {prefix:name} and round-trips valid but strange ids exactly (S5)', async () => {
    const prefix = `api-strange-${randomBytes(3).toString('hex')}`;
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(validMemberId, { minLength: 2, maxLength: 6, selector: canonical }), async (ids) => {
        const name = `q${run++}`;
        const queue = queueOn(prefix, name);
        const members = ids.map(canonical);
        for (const [i, id] of ids.entries()) expect(await queue.enter(id)).toMatchObject({ status: 'WAITING', rank: i, currentTotalWaitingCount: i + 1 });
        for (const [i, id] of ids.entries()) expect((await queue.position(id)).rank).toBe(i);
        const k = queueKeys(prefix, name);
        expect(await admin.zrange(k.waiting, 0, -1), 'members are zset members, byte for byte').toEqual(members);
        const admissions = await queue.admit();
        expect(admissions.map((a) => a.memberId)).toEqual(members);
        const [first, second] = admissions;
        expect((await queue.position(ids[0]!)).entryToken).toBe(first!.entryToken);
        const claim = await queue.claim(ids[0]!, first!.entryToken);
        expect(claim.memberId).toBe(members[0]);
        expect(await queue.consume(claim)).toBe(true);
        expect(await queue.leave(ids[1]!)).toBe(true);
        expect(second!.memberId).toBe(members[1]);
        expect((await admin.hkeys(k.tokens)).sort()).toEqual(members.slice(2).sort());
        // The key names are the fixed set, whatever the member ids were.
        const keys = (await keysUnder(admin, prefix)).filter((key) => key.startsWith(`{${prefix}:${name}}`));
        expect(keys.filter((key) => !FIXED_KEYS.map((kind) => `{${prefix}:${name}}:${kind}`).includes(key))).toEqual([]);
        expect(keys.length).toBeGreaterThan(0);
      }),
      { numRuns: 100 },
    );
    // Across every run: one hash tag per queue, six names at most, and no other key at all.
    const all = await keysUnder(admin, prefix);
    const shape = new RegExp(`^\\{${prefix}:q\\d+\\}:(${FIXED_KEYS.join('|')})$`);
    expect(all.filter((key) => !shape.test(key))).toEqual([]);
    expect(all.length).toBeLessThanOrEqual(run * FIXED_KEYS.length);
  });

  it('treats a number and its decimal string as one member, and every other spelling as another (S5)', async () => {
    const queue = queueOn(`api-numbers-${randomBytes(3).toString('hex')}`);
    await queue.enter(7);
    expect(await queue.enter('7')).toMatchObject({ rank: 0, currentTotalWaitingCount: 1 });
    expect(await queue.enter(7.0)).toMatchObject({ rank: 0, currentTotalWaitingCount: 1 });
    for (const [i, spelling] of ['07', '7.0', '７', ' 7', '+7', '7e0', '0x7', '-7'].entries()) {
      expect(await queue.enter(spelling), spelling).toMatchObject({ rank: i + 1, currentTotalWaitingCount: i + 2 });
    }
    await queue.enter(0);
    expect(await queue.enter('0')).toMatchObject({ rank: 9 });
    expect(await queue.enter(-0)).toMatchObject({ rank: 9 }); // -0 is the safe integer 0
    await queue.enter(Number.MAX_SAFE_INTEGER);
    expect(await queue.enter(String(Number.MAX_SAFE_INTEGER))).toMatchObject({ rank: 10, currentTotalWaitingCount: 11 });
    const [seven] = await queue.admit();
    expect(seven!.memberId).toBe('7');
    expect((await queue.claim('7', seven!.entryToken)).memberId).toBe('7'); // claimed as the string ...
    expect(await queue.state(7)).toBe('READY'); // ... READY as the number
    await expect(queue.claim('07', seven!.entryToken)).rejects.toMatchObject({ code: 'INVALID' });
  });

  // Regression (fails until /tmp/model-fix-1.patch is applied): a string with a lone UTF-16
  // surrogate has no UTF-8 form. ioredis sends U+FFFD in its place, so on Redis the distinct
  // ids 'a\uD800' and 'a\uDBFF' (and 'a\uFFFD') are ONE member: the second sees the first's
  // rank, then its token, and can claim it (I6 binding, S4); admit() reports the member as
  // 'a\uFFFD', an id nobody entered. MemoryStore keeps them apart, so the stores disagree.
  it('refuses member ids that are not well-formed Unicode (lone surrogates), which Redis would merge into one member (S5)', async () => {
    const prefix = `api-surrogate-${randomBytes(3).toString('hex')}`;
    const queue = queueOn(prefix);
    await expectUntouched(prefix, async () => {
      for (const id of ['a\uD800', 'a\uDBFF', '\uDFFF', 'x\uDC00y', '\uDE00\uD83D', `${'🙂'.repeat(10)}\uD83D`]) {
        const error = await queue.enter(id).then(
          () => new Error(`enter(${JSON.stringify(id)}) was accepted; on Redis it is stored as ${JSON.stringify(Buffer.from(id, 'utf8').toString('utf8'))}`),
          (e: unknown) => e,
        );
        expect(error, (error as Error).message).toBeInstanceOf(InvalidMemberIdError);
      }
    });
    // Well-formed pairs stay valid.
    expect((await queue.enter('\uD83D\uDE00')).status).toBe('WAITING');
  });
});

// ---------------------------------------------------------------------------------------

describe.each(ADAPTERS)('hostile input through the %s adapter', (kind) => {
  const prefix = `http-${kind}-${randomBytes(3).toString('hex')}`;
  let queue: WaitingQueue;
  let app: RunningApp;
  const call = (method: string, path: string, headers: Record<string, string | string[]> = {}, body?: string | Buffer) =>
    send(app.port, method, path, headers, body);
  const ROUTES = [
    ['POST', '/queue/enter'],
    ['GET', '/queue/position'],
    ['DELETE', '/queue'],
    ['POST', '/orders'],
  ] as const;
  const admitted = async (member: string) => {
    await queue.enter(member);
    const admission = (await queue.admit()).find((a) => a.memberId === member);
    return admission?.entryToken ?? (await queue.token(member))!.entryToken;
  };
  const expectAnswer = (r: { status: number; text: string }, status: number, code?: string) => {
    expect(r.status, r.text.slice(0, 300)).toBe(status);
    if (code) expect(errorCode(r as never), r.text.slice(0, 300)).toBe(code);
  };

  beforeAll(async () => {
    queue = queueOn(prefix);
    app = await startApp(kind, queue);
    await queue.enter('resident');
  });
  afterAll(async () => {
    await app?.close();
  });

  it('answers 400 INVALID_MEMBER_ID (401 without a member) on every route, with no script and no key (S5)', async () => {
    await fc.assert(
      fc.asyncProperty(invalidMemberIdOverHttp, async (id) => {
        await expectUntouched(prefix, async () => {
          for (const [method, path] of ROUTES) {
            const r = await call(method, path, { 'x-member-json': encodeMember(id), 'x-entry-token': SHAPED_TOKEN });
            if (id === null || id === undefined) expectAnswer(r, 401, 'UNAUTHENTICATED');
            else expectAnswer(r, 400, 'INVALID_MEMBER_ID');
            expect(r.headers['cache-control']).toBe('no-store');
          }
        });
      }),
      { numRuns: 60 },
    );
    // Raw header values: a tab is legal in HTTP but a control character in an id; 10 KB is too long.
    await expectUntouched(prefix, async () => {
      for (const member of ['a\tb', 'x'.repeat(129), 'x'.repeat(10_240), '']) {
        for (const [method, path] of ROUTES)
          expectAnswer(await call(method, path, { 'x-member': member, 'x-entry-token': SHAPED_TOKEN }), 400, 'INVALID_MEMBER_ID');
      }
    });
    expect(app.orders).toBe(0);
  });

  it('serves valid but strange ids and keeps the fixed key set (S5)', async () => {
    for (const id of ['{braces}', 'a:b:c', '*?[glob]', 'ünïcødé-✓', '🙂', 7, '7', Number.MAX_SAFE_INTEGER]) {
      const r = await call('POST', '/queue/enter', { 'x-member-json': encodeMember(id) });
      expectAnswer(r, 200);
      expect((r.json as { status: string }).status).toBe('WAITING');
    }
    // Latin-1 bytes in a raw header reach the app as those characters: a valid id.
    expectAnswer(await call('GET', '/queue/position', { 'x-member': 'caf\u00e9' }), 200);
    const keys = await keysUnder(admin, prefix);
    expect(keys.every((key) => key.startsWith(`{${prefix}:orders}:`) && FIXED_KEYS.includes(key.slice(`{${prefix}:orders}:`.length)))).toBe(true);
  });

  it('answers 401 to malformed tokens (wrong length or alphabet, 5 KB, repeated header) before any script (S1, S6)', async () => {
    await admitted('alice');
    await fc.assert(
      fc.asyncProperty(
        // What can be sent in a header: visible ASCII and Latin-1, up to 5 KB.
        fc.oneof(
          fc.string({ unit: fc.constantFrom(...BASE64URL, '=', '+', '/', '.', '~', ' ', '\u00e9', '"', ','), minLength: 0, maxLength: 200 }),
          fc.string({ unit: 'grapheme-ascii', minLength: 0, maxLength: 5_000 }),
        ),
        async (token) => {
          const trimmed = token.trim();
          fc.pre(!TOKEN_SHAPE.test(trimmed));
          await expectUntouched(prefix, async () => {
            const r = await call('POST', '/orders', { 'x-member': 'alice', 'x-entry-token': token });
            expectAnswer(r, 401, trimmed === '' ? 'ENTRY_TOKEN_MISSING' : 'ENTRY_TOKEN_INVALID');
            if (trimmed.length >= 12) expect(r.text).not.toContain(trimmed);
          });
        },
      ),
      { numRuns: 60 },
    );
    const token = (await queue.token('alice'))!.entryToken;
    await expectUntouched(prefix, async () => {
      expectAnswer(await call('POST', '/orders', { 'x-member': 'alice' }), 401, 'ENTRY_TOKEN_MISSING');
      expectAnswer(await call('POST', '/orders', { 'x-member': 'alice', 'x-entry-token': 'A'.repeat(5_000) }), 401, 'ENTRY_TOKEN_INVALID');
      expectAnswer(await call('POST', '/orders', { 'x-member': 'alice', 'x-entry-token': [token, token] }), 401, 'ENTRY_TOKEN_INVALID');
      expectAnswer(await call('POST', '/orders', { 'x-member': 'alice', 'x-entry-token': [token, 'A'.repeat(43)] }), 401, 'ENTRY_TOKEN_INVALID');
      expectAnswer(await call('POST', '/orders', { 'x-member': 'alice', 'x-entry-token': `${token},${token}` }), 401, 'ENTRY_TOKEN_INVALID');
    });
    expect(app.orders).toBe(0);
    // The member's own token, with surrounding whitespace (trimmed), still gets through.
    expectAnswer(await call('POST', '/orders', { 'x-member': 'alice', 'x-entry-token': `  ${token} ` }), 201);
    expect(app.orders).toBe(1);
  });

  it("answers 401 to another member's or a consumed token and 409 to one in use, writing nothing (S2, S3)", async () => {
    const bobToken = await admitted('bob');
    const carolToken = await admitted('carol');
    await expectUntouched(
      prefix,
      async () => {
        expectAnswer(await call('POST', '/orders', { 'x-member': 'carol', 'x-entry-token': bobToken }), 401, 'ENTRY_TOKEN_INVALID');
        expectAnswer(await call('POST', '/orders', { 'x-member': 'mallory', 'x-entry-token': bobToken }), 401, 'ENTRY_TOKEN_INVALID');
      },
      2,
    );
    const held = await queue.claim('carol', carolToken); // an order in flight elsewhere
    await expectUntouched(
      prefix,
      async () => expectAnswer(await call('POST', '/orders', { 'x-member': 'carol', 'x-entry-token': carolToken }), 409, 'ENTRY_TOKEN_IN_USE'),
      1,
    );
    await queue.release(held);
    expectAnswer(await call('POST', '/orders', { 'x-member': 'bob', 'x-entry-token': bobToken }), 201);
    await expect.poll(() => queue.state('bob')).toBe('NOT_ENTERED'); // auto settle consumed it
    const orders = app.orders;
    await expectUntouched(
      prefix,
      async () => expectAnswer(await call('POST', '/orders', { 'x-member': 'bob', 'x-entry-token': bobToken }), 401, 'ENTRY_TOKEN_INVALID'),
      1,
    );
    expect(app.orders).toBe(orders);
  });

  it('answers 431 to a 20 KB header, even a 20 KB X-Entry-Token, before the app runs (S6)', async () => {
    await expectUntouched(prefix, async () => {
      expectAnswer(await call('POST', '/queue/enter', { 'x-member': 'alice', 'x-padding': 'p'.repeat(20_480) }), 431);
      expectAnswer(await call('POST', '/orders', { 'x-member': 'alice', 'x-entry-token': 'A'.repeat(20_480) }), 431);
      expectAnswer(await call('GET', '/queue/position', { 'x-member': 'x'.repeat(20_480) }), 431);
    });
    expectAnswer(await call('GET', '/queue/position', { 'x-member': 'resident' }), 200); // still serving
  });

  it('ignores bodies where none is expected: 1 MB of JSON on the queue routes (S6)', async () => {
    const big = JSON.stringify({ memberId: 'mallory', entryToken: SHAPED_TOKEN, pad: 'x'.repeat(1_000_000 - 100) });
    expect(big.length).toBeLessThanOrEqual(1_000_000);
    const json = { 'content-type': 'application/json' };
    const entered = await call('POST', '/queue/enter', { ...json, 'x-member': 'body-tester' }, big);
    expectAnswer(entered, 200);
    expect(entered.json).toMatchObject({ status: 'WAITING' });
    expectAnswer(await call('GET', '/queue/position', { ...json, 'x-member': 'body-tester' }, big), 200);
    expectAnswer(await call('DELETE', '/queue', { ...json, 'x-member': 'body-tester' }, big), 204);
    // The body's member id went nowhere.
    expect(await admin.zscore(queueKeys(prefix, 'orders').waiting, 'mallory')).toBeNull();
    expect(await queue.state('body-tester')).toBe('NOT_ENTERED');
    // Broken JSON, and a body over the framework's limit: a 4xx or ignored, never a 5xx.
    for (const [body, headers] of [
      ['{"memberId": ', json],
      ['x'.repeat(2_000_000), json],
      ['\u0000\u0001binary', { 'content-type': 'application/octet-stream' }],
    ] as Array<[string, Record<string, string>]>) {
      // (Express and Koa never read it: 200. Fastify parses bodies before any handler: 400 broken
      // JSON, 413 over its 1 MiB bodyLimit, 415 unknown type, in Fastify's own error format.)
      const calls = await scriptCalls(admin);
      const r = await call('POST', '/queue/enter', { ...headers, 'x-member': 'body-tester' }, body);
      expect([200, 400, 413, 415], `${kind}: ${r.status} ${r.text.slice(0, 200)}`).toContain(r.status);
      if (r.status !== 200) expect((await scriptCalls(admin)) - calls, 'a refused request runs no script').toBe(0);
    }
  });

  it('answers 404, not 500, to other methods and paths near the routes', async () => {
    await expectUntouched(prefix, async () => {
      for (const [method, path] of [
        ['PUT', '/queue/enter'],
        ['PATCH', '/queue/position'],
        ['GET', '/queue/enter/../../orders'],
        ['POST', '/queue/enter%00'],
        ['GET', '/queue/%2e%2e/orders'],
      ] as const) {
        const r = await call(method, path, { 'x-member': 'alice' });
        expect([404, 405], `${method} ${path}: ${r.status}`).toContain(r.status);
      }
    });
  });
});
