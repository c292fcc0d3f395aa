// The entries meant for Edge-like runtimes, as built (npm run build first): waitgate/pass loads no
// `node:` module and no package (jose is bundled), so it runs on the Edge, in Deno, Bun and workers;
// the core entry loads where node:diagnostics_channel is missing.

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MemoryStore, WaitingQueue } from '../../src/index.js';
import { signingWith } from '../support/signing-keys.js';

const execFileAsync = promisify(execFile);
const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\(\s*)['"]([^'"]+)['"]/g;

/** Every file an entry loads (relative imports, followed), and every other specifier they name. */
function closure(entry: string): { files: string[]; outside: string[] } {
  const files = new Set<string>();
  const outside: string[] = [];
  const walk = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const [, specifier] of readFileSync(join(dist, file), 'utf8').matchAll(SPECIFIER)) {
      if (specifier!.startsWith('./')) walk(specifier!.slice(2));
      else outside.push(`${file} -> ${specifier}`);
    }
  };
  walk(entry);
  return { files: [...files], outside };
}

describe('dist/index (the core entry)', () => {
  it.each(['index.js', 'index.cjs'])('%s imports no node:diagnostics_channel (it is looked up, so Edge-like runtimes load the core)', (entry) => {
    expect(closure(entry).outside.filter((imported) => imported.endsWith('node:diagnostics_channel'))).toEqual([]);
  });

  it('loads and runs a queue where the runtime has no diagnostics_channel', async () => {
    const script = `delete process.getBuiltinModule;
      const { WaitingQueue, MemoryStore } = await import(${JSON.stringify(pathToFileURL(join(dist, 'index.js')).href)});
      const queue = new WaitingQueue({ store: new MemoryStore() });
      await queue.enter('m'); await queue.admit();
      console.log((await queue.position('m')).status);`;
    const { stdout } = await execFileAsync(process.execPath, ['--input-type=module', '-e', script]);
    expect(stdout.trim()).toBe('READY');
  });
});

describe('dist/pass', () => {
  it.each(['pass.js', 'pass.cjs'])('%s loads no node: module and no package', (entry) => {
    const { files, outside } = closure(entry);
    expect(files.length).toBeGreaterThan(1);
    expect(outside).toEqual([]);
    for (const file of files) expect(readFileSync(join(dist, file), 'utf8'), file).not.toMatch(/node:/);
  });

  it('verifies a pass of a queue', async () => {
    const { verifyEntryPass } = (await import(pathToFileURL(join(dist, 'pass.js')).href)) as typeof import('../../src/pass/index.js');
    const queue = new WaitingQueue({ store: new MemoryStore(), name: 'drop', signing: signingWith() });
    await queue.enter('m');
    const [admission] = await queue.admit();
    expect(await verifyEntryPass(admission!.entryToken, { keys: queue.jwks(), queue: 'drop', memberId: 'm' })).toMatchObject({ valid: true, memberId: 'm' });
    expect(await verifyEntryPass(admission!.entryToken, { keys: queue.jwks(), queue: 'other' })).toEqual({ valid: false, reason: 'WRONG_QUEUE' });
  });
});
