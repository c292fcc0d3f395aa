// Type tests: each case under cases/ is its own TypeScript program (so one adapter's
// augmentation cannot leak into another case), checked by tsc. @ts-expect-error lines
// make the absence of a type a compile error when it turns up.

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

describe('adapter types', () => {
  // nestjs is checked against dist/ (its tsconfig maps no paths), with experimentalDecorators as in a Nest app.
  it.each(['express', 'fastify', 'fetch', 'hono', 'koa', 'nestjs', 'without-adapters'])(
    '%s type-checks as written',
    async (name) => {
      const result = await run(process.execPath, [tsc, '-p', join(root, 'test', 'types', 'cases', name, 'tsconfig.json')]).catch(
        (error: { stdout: string; stderr: string }) => error,
      );
      expect('stdout' in result ? `${result.stdout}${result.stderr}` : '').toBe('');
    },
    60_000,
  );
});
