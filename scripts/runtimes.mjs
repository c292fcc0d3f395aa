// The Bun and Deno binaries the runtime tests run (test/runtimes), at pinned versions, from the
// npm registry: installed on first use into node_modules/.cache/waitgate-runtimes (npm's own
// cache makes a later install offline). Not devDependencies: each is one platform's package,
// and `npm ci` refuses a package for another platform (EBADPLATFORM) on a contributor's Mac.
//
//   node scripts/runtimes.mjs        installs what is missing, prints the two paths

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const BUN_VERSION = '1.4.5';
export const DENO_VERSION = '2.9.6';

const PACKAGES = {
  'linux-x64': { bun: ['@oven/bun-linux-x64', 'bin/bun'], deno: ['@deno/linux-x64-glibc', 'deno'] },
  'linux-arm64': { bun: ['@oven/bun-linux-aarch64', 'bin/bun'], deno: ['@deno/linux-arm64-glibc', 'deno'] },
  'darwin-x64': { bun: ['@oven/bun-darwin-x64', 'bin/bun'], deno: ['@deno/darwin-x64', 'deno'] },
  'darwin-arm64': { bun: ['@oven/bun-darwin-aarch64', 'bin/bun'], deno: ['@deno/darwin-arm64', 'deno'] },
};

const prefix = fileURLToPath(new URL('../node_modules/.cache/waitgate-runtimes/', import.meta.url));

/** The paths of the bun and deno binaries, installed first when missing. Throws naming the platform when none is published for it. */
export function ensureRuntimes() {
  const platform = `${process.platform}-${process.arch}`;
  const pkgs = PACKAGES[platform];
  if (!pkgs) throw new Error(`no Bun/Deno package pinned for ${platform} in scripts/runtimes.mjs`);
  const bun = `${prefix}node_modules/${pkgs.bun[0]}/${pkgs.bun[1]}`;
  const deno = `${prefix}node_modules/${pkgs.deno[0]}/${pkgs.deno[1]}`;
  if (!existsSync(bun) || !existsSync(deno)) {
    execFileSync(
      'npm',
      [
        'install',
        '--prefix',
        prefix,
        '--no-save',
        '--no-package-lock',
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        `${pkgs.bun[0]}@${BUN_VERSION}`,
        `${pkgs.deno[0]}@${DENO_VERSION}`,
      ],
      { stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000 },
    );
  }
  return { bun, deno };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { bun, deno } = ensureRuntimes();
  console.log(`bun  ${bun}\ndeno ${deno}`);
}
