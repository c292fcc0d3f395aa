// @ts-check
// publint (strict) and are-the-types-wrong on the tarball of the dist/ already built:
// `npm pack --ignore-scripts`, so no second build (`attw --pack` would run prepack, a build).
// `npm run lint:package` builds first; CI runs this after `npm test`, whose pretest built dist/.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
if (!existsSync(join(root, 'dist', 'index.js'))) {
  console.error('dist/ is missing: run `npm run build` first (or `npm run lint:package`, which builds).');
  process.exit(1);
}
const shell = process.platform === 'win32';
/** @param {string} bin a command of node_modules/.bin @param {string[]} args */
const run = (bin, args) => execFileSync(join(root, 'node_modules', '.bin', bin), args, { cwd: root, stdio: 'inherit', shell });

const temp = mkdtempSync(join(tmpdir(), 'waitgate-check-package-'));
try {
  run('publint', ['--strict']);
  const packed = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', temp], {
    cwd: root,
    encoding: 'utf8',
    shell,
  });
  const [{ filename }] = JSON.parse(packed);
  run('attw', [join(temp, filename), '--profile', 'node16']);
} catch (error) {
  process.exitCode = 1;
  if (!(error && typeof error === 'object' && 'status' in error)) console.error(error);
} finally {
  rmSync(temp, { recursive: true, force: true });
}
