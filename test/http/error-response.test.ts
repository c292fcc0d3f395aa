// toHttpResponse: every waitgate error answers with its own status, headers and body.

import { describe, expect, it } from 'vitest';
import { EntryTokenError, InvalidMemberIdError, QueueStateLostError, StoreUnavailableError, WaitgateConfigError, toHttpResponse } from '../../src/index.js';

describe('toHttpResponse', () => {
  it.each([
    [new InvalidMemberIdError('bad id'), 400, 'INVALID_MEMBER_ID', undefined],
    [new EntryTokenError('MISSING'), 401, 'ENTRY_TOKEN_MISSING', undefined],
    [new EntryTokenError('INVALID'), 401, 'ENTRY_TOKEN_INVALID', undefined],
    [new EntryTokenError('IN_USE', { retryAfterSeconds: 12 }), 409, 'ENTRY_TOKEN_IN_USE', '12'],
    [new EntryTokenError('IN_USE'), 409, 'ENTRY_TOKEN_IN_USE', undefined],
    [new StoreUnavailableError('down'), 503, 'STORE_UNAVAILABLE', '2'],
    [new QueueStateLostError('orders'), 503, 'QUEUE_STATE_LOST', undefined],
    [new WaitgateConfigError('admitRatePerSecond', 'must be > 0'), 500, 'CONFIG_INVALID', undefined],
  ])('%s → %i %s', (error, status, code, retryAfter) => {
    const answer = toHttpResponse(error)!;
    expect(answer.status).toBe(status);
    expect(error.statusCode).toBe(status);
    expect(answer.body.error.code).toBe(code);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.headers['retry-after']).toBe(retryAfter);
  });

  it('keeps an option name, a server-side detail, out of the client answer', () => {
    expect(toHttpResponse(new WaitgateConfigError('admitRatePerSecond', 'must be > 0'))!.body.error.message).not.toMatch(/admitRatePerSecond/);
  });

  it('answers null for an error that is not waitgate’s, or for anything else', () => {
    expect(toHttpResponse(new Error('boom'))).toBeNull();
    expect(toHttpResponse('STORE_UNAVAILABLE')).toBeNull();
    expect(toHttpResponse({ code: 'STORE_UNAVAILABLE' })).toBeNull();
  });

  it('maps an error of another copy of waitgate by its brand and code', () => {
    const foreign = Object.assign(new Error('down'), { code: 'STORE_UNAVAILABLE', statusCode: 503, [Symbol.for('waitgate.error')]: true });
    expect(toHttpResponse(foreign)).toMatchObject({ status: 503, body: { error: { code: 'STORE_UNAVAILABLE' } } });
  });
});
