// @ts-check
// A change a user can see must say so in CHANGELOG.md: when the branch changes what ships
// (src/, lua/, the package manifest's public fields), CHANGELOG.md must change too.
// A pull request labelled `no-changelog` (CI passes NO_CHANGELOG=1) is exempt: a refactor, a
// test-only fix that happens to touch src/ comments.
//
// Usage: node scripts/check-changelog.mjs <base-ref>   (e.g. origin/main; CI: the PR's base)

import { execFileSync } from 'node:child_process';

const base = process.argv[2] ?? 'origin/main';
if (process.env.NO_CHANGELOG === '1') {
  console.log('check-changelog: skipped (no-changelog label)');
  process.exit(0);
}
const git = (/** @type {string[]} */ ...args) => execFileSync('git', args, { encoding: 'utf8' });
const changed = git('diff', '--name-only', `${base}...HEAD`).split('\n').filter(Boolean);

/** Does the manifest's published part (not scripts or devDependencies) differ from base's? */
function manifestChanged() {
  if (!changed.includes('package.json')) return false;
  const published = (/** @type {string} */ text) => {
    const { scripts: _s, devDependencies: _d, overrides: _o, ...rest } = JSON.parse(text);
    return JSON.stringify(rest);
  };
  return published(git('show', `${base}:package.json`)) !== published(git('show', 'HEAD:package.json'));
}

const visible = changed.filter((file) => /^(src|lua)\//.test(file));
if (manifestChanged()) visible.push('package.json (published fields)');
if (visible.length > 0 && !changed.includes('CHANGELOG.md')) {
  console.error(
    `check-changelog: these user-visible files changed, CHANGELOG.md did not (add a line under "Unreleased", or label the PR no-changelog):\n  ${visible.join('\n  ')}`,
  );
  process.exit(1);
}
console.log(`check-changelog: ok (${visible.length} user-visible file(s) changed${visible.length ? ', CHANGELOG.md too' : ''})`);
