// The packed tarball, as a user installs it: every subpath loads from ESM and CJS, the root entry works, the types check.
import { existsSync } from 'node:fs';

import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import tsupConfig from '../../tsup.config.js';
import { writeConsumerSources } from './consumer-sources.js';
import { startRedisServer } from '../support/redis-server.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const execFileAsync = promisify(execFile);

/** Named exports each known subpath must have (SPEC §3, §4); a subpath not listed here must export something. */
const EXPECTED_EXPORTS: Record<string, string[]> = {
  '.': [
    'WaitingQueue',
    'RedisStore',
    'MemoryStore',
    'WaitgateError',
    'WaitgateConfigError',
    'InvalidMemberIdError',
    'EntryTokenError',
    'StoreUnavailableError',
    'isWaitgateError',
  ],
  './express': ['queueRoutes', 'requireEntryToken'],
  './fastify': ['queueRoutes', 'requireEntryToken'],
  './koa': ['queueRoutes', 'requireEntryToken'],
  './pass': ['verifyEntryPass'],
  './gate': ['powGate', 'siteverifyGate', 'requestHeader'],
};

type Conditions = { types: string; default: string };
type ExportEntry = string | { import: Conditions; require: Conditions };
interface PackedManifest {
  name: string;
  exports: Record<string, ExportEntry>;
  bin?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  scripts?: Record<string, string>;
}

/** A probe's report for one subpath: its named exports, and those it shares with the root but as different objects. */
interface SubpathReport {
  keys: string[];
  notSharedWithRoot: string[];
}

/**
 * The environment of child npm and node processes, without the variables an
 * enclosing `npm test` sets for this package (they would point npm back at the repo).
 */
const childEnv: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !/^npm_(package_|lifecycle_|config_(local_)?prefix$)/i.test(key)),
);
childEnv.npm_config_update_notifier = 'false';

/** Runs a command to completion within `timeoutMs`; on failure the error carries its output. */
async function run(command: string, args: string[], cwd: string, timeoutMs: number): Promise<string> {
  try {
    const { stdout } = await execFileAsync(command, args, {
      cwd,
      env: childEnv,
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
      maxBuffer: 64 * 1024 * 1024,
      encoding: 'utf8',
    });
    return stdout;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${stdout}\n${stderr}`, { cause: error });
  }
}

/** `.` → `waitgate`, `./express` → `waitgate/express`. */
function specifierOf(name: string, subpath: string): string {
  return subpath === '.' ? name : `${name}/${subpath.slice(2)}`;
}

let temp = '';
let consumer = '';
/** A consumer with waitgate alone: none of its optional peers installed. */
let bare = '';
let tarballFiles: string[] = [];
let manifest: PackedManifest;
let subpaths: string[] = [];
let specifiers: string[] = [];

beforeAll(async () => {
  temp = await mkdtemp(join(tmpdir(), 'waitgate-package-'));
  const packDir = join(temp, 'pack');
  consumer = join(temp, 'consumer');
  await mkdir(packDir);
  await mkdir(consumer);

  // `npm test` built dist already (pretest). Packing with --ignore-scripts skips the
  // prepack rebuild, whose `clean` would delete dist under the e2e project running beside us.
  if (!existsSync(join(repoRoot, 'dist', 'index.js'))) throw new Error('dist/ is missing: run `npm run build` first (npm test does).');
  await run('npm', ['pack', '--ignore-scripts', '--pack-destination', packDir, '--no-audit', '--no-fund'], repoRoot, 180_000);
  const tarballs = (await readdir(packDir)).filter((file) => file.endsWith('.tgz'));
  expect(tarballs).toHaveLength(1);
  const tarball = join(packDir, tarballs[0]!);
  tarballFiles = (await run('tar', ['-tzf', tarball], temp, 30_000))
    .split('\n')
    .filter((line) => line !== '' && !line.endsWith('/'))
    .map((line) => line.replace(/^package\//, ''));
  await run('tar', ['-xzf', tarball, '-C', packDir, 'package/package.json'], temp, 30_000);
  manifest = JSON.parse(await readFile(join(packDir, 'package', 'package.json'), 'utf8')) as PackedManifest;
  subpaths = Object.keys(manifest.exports).filter((subpath) => subpath !== './package.json');
  specifiers = subpaths.map((subpath) => specifierOf(manifest.name, subpath));

  // Every peer (optional ones too: each subpath needs its own), its @types package if
  // the repo uses one, and the compiler the types are checked with.
  const repo = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
  const dependencies: Record<string, string> = { [manifest.name]: `file:${tarball}` };
  for (const [peer, range] of Object.entries(manifest.peerDependencies ?? {})) {
    // The version the repo is tested with (already in the npm cache), else the peer range.
    dependencies[peer] = repo.devDependencies[peer] ?? range;
    const types = `@types/${peer}`;
    if (repo.devDependencies[types]) dependencies[types] = repo.devDependencies[types];
  }
  dependencies.typescript = repo.devDependencies.typescript!;
  dependencies['@types/node'] = repo.devDependencies['@types/node']!;
  // No "type": .js files here are CommonJS; the esm/ folder below sets "type": "module".
  await writeFile(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, dependencies }, null, 2));
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], consumer, 200_000);
  await writeConsumerSources(consumer, manifest.name, specifiers);

  bare = join(temp, 'bare');
  await mkdir(bare);
  await writeFile(join(bare, 'package.json'), JSON.stringify({ name: 'bare', private: true, dependencies: { [manifest.name]: `file:${tarball}` } }, null, 2));
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], bare, 200_000);
  await writeFile(join(bare, 'load.mjs'), BARE_PROBE.replace('LOAD', 'await import(specifier)'));
  await writeFile(join(bare, 'load.cjs'), `(async () => {${BARE_PROBE.replace('LOAD', 'require(specifier)')}})();`);
});

/** Loads each specifier of argv[2] and prints, per specifier, null (loaded) or the error's message. */
const BARE_PROBE = `
  const report = {};
  for (const specifier of JSON.parse(process.argv[2])) {
    try {
      LOAD;
      report[specifier] = null;
    } catch (error) {
      report[specifier] = String(error && error.message);
    }
  }
  process.stdout.write(JSON.stringify(report));
`;

afterAll(async () => {
  // WAITGATE_KEEP_PACKAGE_TEMP=1 keeps the folder to debug a failure.
  if (temp && !process.env.WAITGATE_KEEP_PACKAGE_TEMP) await rm(temp, { recursive: true, force: true });
});

describe('the packed tarball', () => {
  it('holds dist, lua, README.md, LICENSE, CHANGELOG.md and package.json, and no sources or tests', () => {
    for (const file of ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md']) expect(tarballFiles).toContain(file);
    expect(tarballFiles.some((file) => file.startsWith('dist/'))).toBe(true);
    expect(tarballFiles.some((file) => /^lua\/.+\.lua$/.test(file))).toBe(true);
    expect(tarballFiles.filter((file) => /^(src|test|examples|scripts|docs)\//.test(file))).toEqual([]);
    expect(tarballFiles.filter((file) => /\.[cm]?ts$/.test(file) && !/\.d\.[cm]?ts$/.test(file))).toEqual([]);
  });

  it('runs no script of its own when installed (no preinstall, install, postinstall or prepare)', () => {
    // An install-time script runs on every user's machine (and is refused by npm's allow-lists);
    // the generated sources are built before packing, never at install.
    const installTime = ['preinstall', 'install', 'postinstall', 'prepare'];
    expect(Object.keys(manifest.scripts ?? {}).filter((name) => installTime.includes(name))).toEqual([]);
  });

  it('holds every file its exports map points to, each subpath with import and require branches', () => {
    for (const subpath of subpaths) {
      const entry = manifest.exports[subpath]!;
      expect(typeof entry, subpath).toBe('object');
      if (typeof entry === 'string') continue;
      expect(Object.keys(entry), subpath).toEqual(['import', 'require']);
      expect(Object.keys(entry.import), subpath).toEqual(['types', 'default']);
      expect(Object.keys(entry.require), subpath).toEqual(['types', 'default']);
      for (const target of [entry.import.types, entry.import.default, entry.require.types, entry.require.default]) {
        expect(tarballFiles, `${subpath} → ${target}`).toContain(target.replace(/^\.\//, ''));
      }
    }
  });

  it('is built from one tsup entry per subpath and per command, each subpath documented by typedoc', async () => {
    // Guards the lists that must grow with the exports map.
    expect(Array.isArray(tsupConfig) || typeof tsupConfig === 'function').toBe(false);
    const entry = (tsupConfig as { entry: Record<string, string> }).entry;
    const outputs = subpaths.map((subpath) => {
      const target = manifest.exports[subpath]!;
      return basename(typeof target === 'string' ? target : target.import.default).replace(/\.js$/, '');
    });
    const commands = Object.values(manifest.bin ?? {}).map((target) => basename(target).replace(/\.js$/, ''));
    expect(Object.keys(entry).sort()).toEqual([...outputs, ...commands].sort());
    const typedoc = JSON.parse(await readFile(join(repoRoot, 'typedoc.json'), 'utf8')) as { entryPoints: string[] };
    expect([...typedoc.entryPoints].sort()).toEqual(outputs.map((output) => entry[output]).sort());
  });

  it('installs the waitgate command: it runs from node_modules/.bin', async () => {
    expect(manifest.bin).toEqual({ waitgate: './dist/cli.js' });
    const help = await run(join(consumer, 'node_modules', '.bin', 'waitgate'), ['--help'], consumer, 60_000);
    expect(help).toContain('Usage: waitgate <command>');
  });
});

describe.each([
  { system: 'ESM', probe: 'load.mjs' },
  { system: 'CJS', probe: 'load.cjs' },
])('without the optional peers, from $system', ({ probe }) => {
  it('loads the core, the client, fetch and the dashboard; any other subpath fails naming the package to install', async () => {
    expect(Object.keys(manifest.peerDependencies ?? {}).length).toBeGreaterThan(0);
    expect(await readdir(join(bare, 'node_modules'))).not.toContain('ioredis');
    const report = JSON.parse(await run(process.execPath, [probe, JSON.stringify(specifiers)], bare, 60_000)) as Record<string, string | null>;
    for (const specifier of [manifest.name, `${manifest.name}/client`, `${manifest.name}/fetch`, `${manifest.name}/dashboard`]) {
      expect(report[specifier], specifier).toBeNull();
    }
    const peers = Object.keys(manifest.peerDependencies ?? {});
    for (const [specifier, message] of Object.entries(report)) {
      if (message === null) continue;
      // A subpath import of a peer (`altcha-lib/v1`) names the peer too.
      expect(
        peers.some((peer) => [`'${peer}`, `"${peer}`].some((quoted) => message.includes(quoted))),
        `${specifier}: ${message}`,
      ).toBe(true);
    }
    // The adapters of frameworks whose code they call at load time do fail: the message says what to install.
    for (const [specifier, peer] of [
      [`${manifest.name}/hono`, 'hono'],
      [`${manifest.name}/opentelemetry`, '@opentelemetry/api'],
      [`${manifest.name}/nestjs`, '@nestjs/'],
    ] as const) {
      expect(report[specifier], specifier).toContain(peer);
    }
  });
});

describe.each([
  { system: 'ESM', probe: 'exports.mjs' },
  { system: 'CJS', probe: 'exports.cjs' },
])('every subpath loaded from $system', ({ probe }) => {
  it('has its named exports, and shares the root classes rather than copying them', async () => {
    const report = JSON.parse(await run(process.execPath, [probe, JSON.stringify(specifiers)], consumer, 60_000)) as Record<string, SubpathReport>;
    expect(Object.keys(report).sort()).toEqual([...specifiers].sort());
    subpaths.forEach((subpath, i) => {
      const { keys, notSharedWithRoot } = report[specifiers[i]!]!;
      const expected = EXPECTED_EXPORTS[subpath];
      if (expected) expect(keys, subpath).toEqual(expect.arrayContaining(expected));
      else expect(keys.length, subpath).toBeGreaterThan(0);
      expect(notSharedWithRoot, subpath).toEqual([]);
    });
  });
});

it('every subpath has the same named exports from ESM and CJS', async () => {
  const [esm, cjs] = await Promise.all(
    ['exports.mjs', 'exports.cjs'].map(
      async (probe) => JSON.parse(await run(process.execPath, [probe, JSON.stringify(specifiers)], consumer, 60_000)) as Record<string, SubpathReport>,
    ),
  );
  for (const specifier of specifiers) expect(cjs![specifier]!.keys, specifier).toEqual(esm![specifier]!.keys);
});

describe.each([
  { system: 'ESM ("type": "module", import)', script: join('esm', 'use.js') },
  { system: 'CJS (no "type", require)', script: join('cjs', 'use.js') },
])('the root entry from $system', ({ script }) => {
  it('runs a member through enter, admit, claim and consume on a MemoryStore, with typed errors', async () => {
    const result = JSON.parse(await run(process.execPath, [script], consumer, 60_000)) as unknown;
    expect(result).toEqual({
      entered: { status: 'WAITING', rank: 0 },
      admitted: ['member-1'],
      tokenLength: 43,
      ready: 'READY',
      claim: { memberId: 'member-1', tokenIdIsString: true },
      consumed: true,
      after: 'NOT_ENTERED',
      reclaim: { name: 'EntryTokenError', code: 'INVALID', instanceofEntryTokenError: true, instanceofWaitgateError: true, isWaitgateError: true },
      config: { name: 'WaitgateConfigError', code: 'CONFIG_INVALID', instanceofWaitgateError: true, isWaitgateError: true },
      // The same error from the other module system's copy of the package (the dual-package hazard).
      otherCopy: { code: 'INVALID', isWaitgateError: true },
      notAnError: false,
      // A user of the memory store alone needs no ioredis (SPEC §2).
      ioredisLoaded: false,
    });
  });
});

describe.each([
  { system: 'ESM', file: 'check.mts' },
  { system: 'CJS', file: 'check.cts' },
])('tsc on the public API from $system', ({ file }) => {
  it(`type-checks ${file} (nodenext, strict, skipLibCheck false)`, async () => {
    const tsc = join(consumer, 'node_modules', 'typescript', 'bin', 'tsc');
    const args = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022'];
    args.push('--skipLibCheck', 'false', '--types', 'node', '--pretty', 'false', file);
    const output = await run(process.execPath, [tsc, ...args], consumer, 120_000).then(
      () => '',
      (error: Error) => {
        const cause = error.cause as { stdout?: string; code?: unknown };
        // Only tsc's own "errors found" exit (2) is filtered below; a crash or timeout fails as is.
        return cause.code === 2 && cause.stdout?.trim() ? cause.stdout : error.message;
      },
    );
    expect(ownTypeErrors(output)).toEqual([]);
  });
});

/**
 * The errors of tsc's output (`--pretty false`) that are ours: in the check file or
 * in waitgate's declarations, or with no file at all. Errors inside another
 * package's declarations (e.g. @types/koa against the content-disposition types
 * that koa 3 installs) are that package's, and a user with skipLibCheck false
 * meets them with or without waitgate.
 */
function ownTypeErrors(output: string): string[] {
  const errors: string[] = [];
  for (const line of output.split('\n')) {
    if (line.startsWith(' ') && errors.length > 0) errors[errors.length - 1] += `\n${line}`;
    else if (line.trim() !== '') errors.push(line);
  }
  return errors.filter((error) => {
    const file = /^(.+?)\(\d+,\d+\): error /.exec(error)?.[1];
    return file === undefined || !file.startsWith('node_modules/') || file.startsWith('node_modules/waitgate/');
  });
}

/** The ```js blocks of the README's Quickstart section, in order. */
async function quickstartBlocks(): Promise<string[]> {
  const readme = await readFile(join(repoRoot, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Quickstart'), readme.indexOf('\n## ', readme.indexOf('\n## Quickstart') + 1));
  return [...section.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

describe('the README quickstarts, pasted into a project that installed the tarball', () => {
  it('runs the in-memory quickstart: an order committed, the token used up', async () => {
    const [memory] = await quickstartBlocks();
    await writeFile(join(consumer, 'quickstart.mjs'), memory!);
    const output = await run(process.execPath, ['quickstart.mjs'], consumer, 60_000);
    expect(output).toMatch(/order committed/);
    expect(output).toMatch(/waiting: 0,\s+active: 0,\s+claimed: 0/);
  });

  it('runs the Redis quickstart against a redis-server of its own', async () => {
    const server = await startRedisServer();
    try {
      const [, redis] = await quickstartBlocks();
      await writeFile(join(consumer, 'quickstart-redis.mjs'), redis!);
      childEnv.REDIS_URL = server.url; // ours, never the machine's
      const output = await run(process.execPath, ['quickstart-redis.mjs'], consumer, 60_000).catch((error: Error) => error.message);
      expect(output).toMatch(/status: 'READY'/);
    } finally {
      delete childEnv.REDIS_URL;
      await server.stop();
    }
  });
});
