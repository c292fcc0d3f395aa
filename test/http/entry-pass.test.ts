// The framework-neutral pass guard (src/http/entry-pass.ts): its options, the keys-only form.

import { describe, expect, it } from 'vitest';
import { MemoryStore, WaitgateConfigError, WaitingQueue } from '../../src/index.js';
import { parsePassGuard } from '../../src/http/entry-pass.js';
import { signingWith } from '../support/signing-keys.js';

const memberId = () => 'alice';

describe('parsePassGuard', () => {
  const queue = new WaitingQueue({ store: new MemoryStore(), name: 'drop', signing: signingWith() });

  it.each([
    [queue, { memberId, sessionSeconds: 0 }, 'sessionSeconds'],
    [queue, { memberId, sessionSeconds: 86_401 }, 'sessionSeconds'],
    [queue, { memberId, checkRevoked: 'yes' }, 'checkRevoked'],
    [queue, { memberId, extra: 1 }, 'extra'],
    [queue, { memberId, tokenHeader: 'bad header' }, 'tokenHeader'],
    [new WaitingQueue({ store: new MemoryStore() }), { memberId }, 'queue'],
    [{ keys: queue.jwks(), queue: 'drop' }, { memberId, checkRevoked: true }, 'checkRevoked'],
    [{ keys: queue.jwks() }, { memberId }, 'queue'],
  ])('refuses a bad source or option (%#) naming it', (source, options, option) => {
    let error: unknown;
    try {
      parsePassGuard(source as never, options as never);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(WaitgateConfigError);
    expect((error as WaitgateConfigError).option).toBe(option);
  });

  it('with keys only (an edge or another service): verifies without a store, keys from a function', async () => {
    await queue.enter('alice');
    const pass = (await queue.admit())[0]!.entryToken;
    const guard = parsePassGuard({ keys: async () => queue.jwks(), queue: 'drop' }, { memberId });
    expect(await guard.check('alice', pass)).toMatchObject({ kind: 'pass', pass: { memberId: 'alice' } });
    expect(await guard.check('alice', [pass, pass])).toMatchObject({ kind: 'respond', result: { status: 401 } });
    const other = parsePassGuard({ keys: queue.jwks(), queue: 'other' }, { memberId });
    expect(await other.check('alice', pass)).toMatchObject({ kind: 'respond', result: { status: 401, body: { error: { code: 'ENTRY_TOKEN_INVALID' } } } });
  });
});
