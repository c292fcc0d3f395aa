// Bun and Deno, their binaries from the npm registry (pinned in scripts/runtimes.mjs, installed
// on first use into node_modules/.cache, then from npm's cache), serving the built package on
// waitgate/fetch and waitgate/hono, through the runtime table. Bun.serve and Deno.serve sign
// their tokens (WAITGATE_SIGNING_KEY) and check passes with verifyEntryPass in that runtime;
// `deno serve` keeps opaque tokens. Needs `npm run build`.

import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ensureRuntimes } from '../../scripts/runtimes.mjs';
import { privateKeyPem } from '../support/signing-keys.js';
import { describeRuntime, startServer, type Server } from './table.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const servers = fileURLToPath(new URL('./servers/', import.meta.url));
const { bun, deno } = ensureRuntimes();
const LISTENING = /listening (\d+)/;
const DENO_SERVE_LISTENING = /Listening on http:\/\/[^\s]*:(\d+)\//;

const signingKey = privateKeyPem();
const started: Record<string, Server> = {};
const runs: Array<[string, () => Promise<Server>, string?]> = [];
for (const adapter of ['fetch', 'hono']) {
  const env = { WAITGATE_ADAPTER: adapter };
  const signed = { ...env, WAITGATE_SIGNING_KEY: signingKey };
  runs.push(
    [`Bun.serve (${adapter})`, () => startServer(bun, ['run', 'bun-serve.mjs'], { cwd: servers, env: signed, listening: LISTENING }), signingKey],
    [
      `Deno.serve (${adapter})`,
      () => startServer(deno, ['run', '-A', '--unstable-no-legacy-abort', 'deno-serve.mjs'], { cwd: servers, env: signed, listening: LISTENING }),
      signingKey,
    ],
    [
      `deno serve (${adapter})`,
      () =>
        startServer(deno, ['serve', '-A', '--unstable-no-legacy-abort', '--host', '127.0.0.1', '--port', '0', 'default-export.mjs'], {
          cwd: servers,
          env,
          listening: DENO_SERVE_LISTENING,
        }),
    ],
  );
}

beforeAll(async () => {
  await Promise.all(runs.map(async ([name, start]) => void (started[name] = await start())));
}, 60_000);
afterAll(async () => {
  await Promise.all(Object.values(started).map((server) => server.close()));
});

for (const [name, , key] of runs) describeRuntime(name, () => started[name]!, { signingKey: key });

it('runs dist/ through the exports map, and prints no warning (Deno with --unstable-no-legacy-abort: none about request.signal)', () => {
  for (const [name, server] of Object.entries(started)) {
    expect(server.output(), name).toContain(`waitgate from file://${root}dist/index.js`);
    expect(server.output(), name).not.toMatch(/warn|unhandled|request\.signal/i);
  }
});
