// The Next.js example (examples/nextjs) as shipped: `next build`, then `next start`, driven
// through the runtime table. `next` is a pinned devDependency; its `waitgate` is the built
// package (dist/, through the exports map). Needs `npm run build`.

import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
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

let server: Server;
let buildOutput = '';
beforeAll(async () => {
  const { stdout, stderr } = await promisify(execFile)(next, ['build'], { cwd: example, env, maxBuffer: 16 * 1024 * 1024 });
  buildOutput = stdout + stderr;
  const port = await freePort();
  server = await startServer(next, ['start', '-p', String(port), '-H', '127.0.0.1'], {
    cwd: example,
    env,
    listening: new RegExp(`:(${port})[\\s\\S]*Ready in`),
  });
}, 240_000);
afterAll(async () => {
  await server?.close();
});

it('builds as shipped: both route handlers, no unhandled error', () => {
  expect(buildOutput).toContain('/api/orders');
  expect(buildOutput).toContain('/api/queue/[[...path]]');
  expect(buildOutput).not.toMatch(/unhandled error/i);
});

describeRuntime('next start (examples/nextjs)', () => server, { testHeaders: false });
