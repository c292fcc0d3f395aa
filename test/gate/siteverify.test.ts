// siteverifyGate (SPEC §17) against a verify endpoint of this test's own, over real HTTP: the
// form it posts, each answer of the provider, and a provider that cannot be reached.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WaitgateConfigError } from '../../src/index.js';
import { siteverifyGate } from '../../src/gate/index.js';

const posted: Array<{ contentType: string | undefined; form: Record<string, string> }> = [];
let url: string;
const server = createServer((req: IncomingMessage, res) => {
  let body = '';
  req.on('data', (chunk) => (body += String(chunk)));
  req.on('end', () => answer(body, req, res));
});

function answer(body: string, req: IncomingMessage, res: ServerResponse) {
  const form = Object.fromEntries(new URLSearchParams(body));
  posted.push({ contentType: req.headers['content-type'], form });
  if (form.response === 'slow') return void setTimeout(() => res.end('{"success":true}'), 500);
  if (form.response === 'broken') return void res.writeHead(500).end('oops');
  res.setHeader('content-type', 'application/json');
  res.end(
    JSON.stringify(form.secret === 's3cret' && form.response === 'good' ? { success: true } : { success: false, 'error-codes': ['invalid-input-response'] }),
  );
}

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/siteverify`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const ask = (gate: ReturnType<typeof siteverifyGate>, token?: string) =>
  gate({ headers: token === undefined ? {} : { 'x-waitgate-challenge': token } }, { memberId: 'm', pressure: 1 });

describe('siteverifyGate', () => {
  it('allows a token the provider confirms, posting the secret and the token as a form', async () => {
    const gate = siteverifyGate({ secret: 's3cret', url, siteKey: 'site-key' });
    expect(await ask(gate, 'good')).toEqual({ verdict: 'allow' });
    expect(posted.at(-1)).toEqual({ contentType: 'application/x-www-form-urlencoded', form: { secret: 's3cret', response: 'good' } });
  });

  it('challenges without a token (the challenge names the site key and the header), and for a refused one', async () => {
    const gate = siteverifyGate({ secret: 's3cret', url, siteKey: 'site-key' });
    const before = posted.length;
    expect(await ask(gate)).toEqual({ verdict: 'challenge', challenge: { kind: 'siteverify', siteKey: 'site-key', header: 'x-waitgate-challenge' } });
    expect(posted.length).toBe(before); // no token: the provider is not asked
    expect((await ask(gate, 'bad')).verdict).toBe('challenge');
    expect((await siteverifyGate({ secret: 's3cret', url, onInvalid: 'shadow' })('x' as never, { memberId: 'm', pressure: 0 })).verdict).toBe('challenge');
    expect((await ask(siteverifyGate({ secret: 's3cret', url, onInvalid: 'shadow' }), 'bad')).verdict).toBe('shadow');
  });

  it('challenges again when the provider fails, is slow or cannot be reached (never allows blindly)', async () => {
    expect((await ask(siteverifyGate({ secret: 's3cret', url }), 'broken')).verdict).toBe('challenge');
    expect((await ask(siteverifyGate({ secret: 's3cret', url, timeoutMs: 100 }), 'slow')).verdict).toBe('challenge');
    expect((await ask(siteverifyGate({ secret: 's3cret', url: 'http://127.0.0.1:1/siteverify' }), 'good')).verdict).toBe('challenge');
  });

  it('calls the fetch it is given', async () => {
    const calls: string[] = [];
    const gate = siteverifyGate({ secret: 's3cret', url, fetch: (input, init) => (calls.push(String(input)), fetch(input, init)) });
    expect((await ask(gate, 'good')).verdict).toBe('allow');
    expect(calls).toEqual([url]);
  });

  it('refuses bad options', () => {
    expect(() => siteverifyGate({ secret: '' })).toThrow(WaitgateConfigError);
    expect(() => siteverifyGate({ secret: 'x', url: 'not a url' })).toThrow(WaitgateConfigError);
  });
});
