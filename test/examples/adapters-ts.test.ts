// The TypeScript example servers (examples/*-ts/server.ts, examples/hono/server.ts), run as a reader runs them: through
// tsx, in a child process, on a free port (PORT=0), on the memory store. A member enters, the
// example's own admitter admits it, an order with its token is placed (201, tokenId recorded),
// the same token is refused afterwards (401), and SIGTERM stops the server cleanly (exit code 0).
// `waitgate` resolves to src/ here (tsx `paths` built from tsup's entries), so no build is needed;
// `npm run check:snippets` type-checks the examples against the built package.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import tsupConfig from '../../tsup.config.js';

const root = join(import.meta.dirname, '..', '..');
const EXAMPLES = ['express-ts', 'fastify-ts', 'koa-ts', 'hono'];

let temp = '';
let tsconfig = '';
const running = new Set<{ kill(signal: NodeJS.Signals): boolean }>();

beforeAll(() => {
  const entry = (tsupConfig as { entry: Record<string, string> }).entry;
  const paths = Object.fromEntries(Object.entries(entry).map(([name, file]) => [name === 'index' ? 'waitgate' : `waitgate/${name}`, [join(root, file)]]));
  temp = mkdtempSync(join(tmpdir(), 'waitgate-examples-'));
  tsconfig = join(temp, 'tsconfig.json');
  writeFileSync(tsconfig, JSON.stringify({ compilerOptions: { paths } }));
});

afterAll(() => {
  for (const child of running) child.kill('SIGKILL');
  if (temp) rmSync(temp, { recursive: true, force: true });
});

/** Starts an example and resolves with its URL once it prints `listening on <url>`. */
async function start(example: string) {
  const { REDIS_URL: _redis, PORT: _port, ...env } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'examples', example, 'server.ts')], {
    cwd: root,
    env: { ...env, PORT: '0', TSX_TSCONFIG_PATH: tsconfig },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => reject(new Error(`${example} exited with ${code} before listening:\n${output}`)));
  });
  return { url, exited, stop: () => child.kill('SIGTERM'), output: () => output };
}

interface PositionBody {
  status: string;
  entryToken: string | null;
}

describe('TypeScript examples', () => {
  it.each(EXAMPLES)(
    '%s: enter, admitted, one order per token, clean stop',
    async (example) => {
      const server = await start(example);
      const member = { 'x-member-id': 'alice' };
      const position = async () => (await (await fetch(`${server.url}/queue/position`, { headers: member })).json()) as PositionBody;

      expect((await fetch(`${server.url}/queue/enter`, { method: 'POST', headers: member })).status).toBe(200);
      // The example's admitter (every second) admits alice.
      await expect.poll(async () => (await position()).status, { timeout: 10_000, interval: 100 }).toBe('READY');
      const { entryToken } = await position();
      expect(entryToken).toEqual(expect.any(String));

      const order = () =>
        fetch(`${server.url}/orders`, {
          method: 'POST',
          headers: { ...member, 'x-entry-token': entryToken!, 'content-type': 'application/json' },
          body: JSON.stringify({ item: 'sneakers' }),
        });
      const first = await order();
      expect(first.status).toBe(201);
      expect(await first.json()).toEqual({ id: 1, memberId: 'alice', item: 'sneakers', tokenId: expect.stringMatching(/^[0-9a-f]{32}$/) });

      // The guard consumes the token once the 201 is sent; from then on it is refused.
      await expect.poll(async () => (await position()).status, { timeout: 5_000, interval: 50 }).toBe('NOT_ENTERED');
      const second = await order();
      expect(second.status).toBe(401);
      expect(((await second.json()) as { error: { code: string } }).error.code).toBe('ENTRY_TOKEN_INVALID');

      server.stop();
      const code = await Promise.race([server.exited, new Promise((r) => setTimeout(() => r('still running after 10 s'), 10_000))]);
      expect(code, server.output()).toBe(0);
    },
    60_000,
  );
});
