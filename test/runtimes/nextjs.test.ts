// The Next.js example (examples/nextjs) as shipped: `next build`, then `next start`, driven
// through the runtime table. `next` is a pinned devDependency; its `waitgate` is the built
// package (dist/, through the exports map). Needs `npm run build`. `next start` gets a signing
// key: its tokens are signed passes, and middleware.ts checks them on the Edge runtime.

import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { privateKeyPem } from '../support/signing-keys.js';
import { describeRuntime, startServer, type Server } from './table.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const example = `${root}examples/nextjs`;
const next = `${root}node_modules/.bin/next`;
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

const signingKey = privateKeyPem();
let server: Server;
let buildOutput = '';
beforeAll(async () => {
  const { stdout, stderr } = await promisify(execFile)(next, ['build'], { cwd: example, env, maxBuffer: 16 * 1024 * 1024 });
  buildOutput = stdout + stderr;
  const port = await freePort();
  server = await startServer(next, ['start', '-p', String(port), '-H', '127.0.0.1'], {
    cwd: example,
    env: { ...env, WAITGATE_SIGNING_KEY: signingKey },
    listening: new RegExp(`:(${port})[\\s\\S]*Ready in`),
  });
}, 240_000);
afterAll(async () => {
  await server?.close();
});

it('builds as shipped: the route handlers and the middleware, no unhandled error', () => {
  expect(buildOutput).toContain('/api/orders');
  expect(buildOutput).toContain('/api/queue/[[...path]]');
  expect(buildOutput).toContain('/api/checkout');
  expect(buildOutput).toMatch(/Middleware/);
  expect(buildOutput).not.toMatch(/unhandled error/i);
});

it('the middleware checks passes on the Edge runtime, and serves the queue keys cacheable', async () => {
  const refused = await fetch(`${server.url}/api/checkout`, { headers: { 'x-member-id': 'm', 'x-entry-token': 'not.a.pass' } });
  expect(refused.status).toBe(401);
  expect(refused.headers.get('x-entry-checked-on')).toBe('edge');
  const jwks = await fetch(`${server.url}/api/queue/.well-known/jwks.json`);
  expect(jwks.headers.get('cache-control')).toBe('public, max-age=300');
  expect(((await jwks.json()) as { keys: Array<{ kid: string }> }).keys.map((key) => key.kid)).toEqual(['main']);
});

describeRuntime('next start (examples/nextjs)', () => server, { testHeaders: false, signingKey });
