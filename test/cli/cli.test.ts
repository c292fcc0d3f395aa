// The waitgate command (SPEC §9), run as a user runs it: `node dist/cli.js` as a child
// process (build first: `npm run build`; CI's pretest does), against a throwaway
// redis-server shared with a WaitingQueue standing in for a running app instance.

import { execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore, WaitingQueue, drawOrder, type QueueControls, type QueueStats } from '../../src/index.js';
import { startOneNodeCluster } from '../support/cluster.js';
import { freePort, startRedisServer, type RedisServer } from '../support/redis-server.js';
import { sleep, uniqueName } from '../support/unique.js';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const OPERATION_TIMEOUT_MS = 1000; // the queue's default operationTimeoutMs

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

let server: RedisServer;
let client: Redis;

/** Runs the command with REDIS_URL pointing at the test server (unless `env` says otherwise). */
function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, REDIS_URL: server.url, NO_COLOR: '1', ...env }, timeout: 15_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr, ms: Date.now() - started });
      },
    );
  });
}

const json = <T>(run: Run): T => JSON.parse(run.stdout) as T;

/** An app instance's queue on the test server; its own options are deliberately not the command's. */
function appQueue(name = uniqueName('cli')): WaitingQueue {
  return new WaitingQueue({ store: new RedisStore({ client }), name, admitRatePerSecond: 7, maxActive: 3 });
}

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  server = await startRedisServer();
  client = new Redis(server.url, { maxRetriesPerRequest: 1 });
});

afterAll(async () => {
  client?.disconnect();
  await server?.stop();
});

describe('help and usage errors (no Redis needed)', { timeout: 20_000 }, () => {
  it('--help lists every command, and each command has its own help', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    for (const command of ['status', 'watch', 'pause', 'resume', 'close', 'passthrough', 'set', 'schedule', 'inspect', 'draw', 'log']) {
      expect(help.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
    const set = await cli(['set', '--help']);
    expect(set.code).toBe(0);
    for (const flag of ['--rate', '--burst', '--max-active', '--message', '--queue', '--redis', '--json']) expect(set.stdout).toContain(flag);
  });

  it('exits 2 with one line and a hint to --help for a bad command line', async () => {
    const runs = await Promise.all([
      cli(['bogus']),
      cli(['status', '--queue', 'q', '--bogus']),
      cli(['set', '--queue', 'q', '--rate', 'abc']),
      cli(['set', '--queue', 'q', '--rate', '0']),
      cli(['set', '--queue', 'q', '--max-active', '2.5']),
      cli(['status']),
      cli(['schedule', '--queue', 'q', '--opens-at', 'tomorrow']),
      cli(['draw', '--seed', 'xyz', 'a']),
      cli([]),
    ]);
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(run.stderr).toMatch(/^waitgate: .*--help/);
      expect(run.stdout).toBe('');
    }
    expect(runs[1]!.stderr).toContain('--bogus');
    expect(runs[2]!.stderr).toContain('--rate');
    expect(runs[3]!.stderr).toContain('admitRatePerSecond'); // setControls's own validation names the field
    expect(runs[4]!.stderr).toContain('maxActive');
    expect(runs[5]!.stderr).toContain('--queue');
  });
});

// Each test spawns a few processes (about 0.4 s each); the default 5 s is tight on a loaded machine.
describe('against Redis', { timeout: 20_000 }, () => {
  it('status --json matches stats() and controls() of a running queue', async () => {
    const queue = appQueue();
    for (let i = 0; i < 6; i++) await queue.enter(`m${i}`);
    await queue.admit(); // maxActive 3: three admitted, three waiting

    const before = await cli(['status', '--queue', queue.name, '--json']);
    expect(before.code, before.stderr).toBe(0);
    const status = json<{ queue: string; stats: QueueStats; controls: Record<string, unknown> & { unset: string[] } }>(before);
    const stats = await queue.stats();
    expect(status.queue).toBe(queue.name);
    expect({ ...status.stats, admittedPerSecond: 0 }).toEqual({ ...stats, admittedPerSecond: 0, admitRatePerSecond: null }); // the rate: the instances' own
    expect(status.stats.admittedPerSecond).toBeCloseTo(stats.admittedPerSecond, 0);
    expect(status.stats).toMatchObject({ waiting: 3, active: 3, totals: { entered: 6, admitted: 3 } });
    // Never set through the controls: the instances' own options, which the command cannot know.
    expect(status.controls.unset).toEqual(['admitRatePerSecond', 'admitBurst', 'maxActive', 'safetyNet']);
    expect(status.controls).toMatchObject({ admitRatePerSecond: null, admitBurst: null, maxActive: null, safetyNet: null });
    const { admitRatePerSecond: _r, admitBurst: _b, maxActive: _m, safetyNet: _n, ...rest } = await queue.controls();
    expect(status.controls).toMatchObject(rest);
    const text = await cli(['status', '--queue', queue.name]);
    expect(text.stdout).toMatch(/^rate\s+instances' option$/m);
    expect(text.stdout).not.toContain('7/s'); // the app's option is not the command's to show

    await queue.setControls({ admitRatePerSecond: 9, admitBurst: 4, maxActive: 5, safetyNet: false });
    const after = json<{ controls: QueueControls & { unset: string[] } }>(await cli(['status', '--queue', queue.name, '--json']));
    const { unset, ...controls } = after.controls;
    expect(unset).toEqual([]);
    expect(controls).toEqual(await queue.controls());
  });

  it('status shows the invite-code lanes as stored: each lane, its share, members waiting and code uses left', async () => {
    const name = uniqueName('cli');
    const queue = new WaitingQueue({ store: new RedisStore({ client }), name, lanes: [{ name: 'vip', share: 0.3 }] });
    await queue.addCodes('vip', ['V1', 'V2', 'V3']);
    await queue.enter('plain');
    await queue.enter('guest', { code: 'V2' });
    const status = json<{ stats: QueueStats }>(await cli(['status', '--queue', name, '--json']));
    expect(status.stats.lanes).toEqual([
      { name: 'default', share: 0.7, waiting: 1, codeUsesLeft: null },
      { name: 'vip', share: 0.3, waiting: 1, codeUsesLeft: 2 },
    ]);
    const text = await cli(['status', '--queue', name]);
    expect(text.stdout).toMatch(/^lanes\s+default 70% 1 waiting {2}· {2}vip 30% 1 waiting, 2 code uses left$/m);
  });

  it('pause, set, close and schedule change the controls the running queue sees, and only the fields given', async () => {
    const queue = appQueue();
    const store = new RedisStore({ client });

    // Nobody had used this queue yet (a typo in --queue?): refused, nothing written, unless --create.
    const refused = await cli(['pause', '--queue', queue.name, '--message', 'Back in five minutes']);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(/^waitgate: queue '.+' \(prefix 'waitgate'\) has no state: check --queue and --prefix, or pass --create/);
    expect(await client.exists(`{waitgate:${queue.name}}:meta`)).toBe(0);
    const pause = await cli(['pause', '--queue', queue.name, '--message', 'Back in five minutes', '--create']);
    expect(pause.code, pause.stderr).toBe(0);
    expect(await queue.controls()).toMatchObject({ mode: 'paused', message: 'Back in five minutes', admitRatePerSecond: 7 });

    const set = await cli(['set', '--queue', queue.name, '--rate', '20', '--json']);
    expect(set.code, set.stderr).toBe(0);
    expect(json<{ patch: unknown }>(set).patch).toEqual({ admitRatePerSecond: 20 });
    expect(await queue.controls()).toMatchObject({ mode: 'paused', message: 'Back in five minutes', admitRatePerSecond: 20, maxActive: 3 });
    expect(await store.controls(queue.name)).toMatchObject({ admitRatePerSecond: 20, admitBurst: null, maxActive: undefined });

    const close = await cli(['close', '--queue', queue.name, '--message', 'Sold out, thank you!']);
    expect(close.code, close.stderr).toBe(0);
    expect(await queue.controls()).toMatchObject({ mode: 'closed', message: 'Sold out, thank you!' });

    const opensAt = Date.now() + 3_600_000;
    const schedule = await cli(['schedule', '--queue', queue.name, '--opens-at', new Date(opensAt).toISOString(), '--shuffle']);
    expect(schedule.code, schedule.stderr).toBe(0);
    const scheduled = await queue.controls();
    expect(scheduled).toMatchObject({ opensAt, shuffle: true, drawSeed: null });
    expect(scheduled.drawCommitment).toMatch(/^[0-9a-f]{64}$/);
    expect(schedule.stdout).toContain(scheduled.drawCommitment);

    const past = await cli(['schedule', '--queue', queue.name, '--opens-at', String(Date.now() - 60_000)]);
    expect(past.code).toBe(2);
    expect((await queue.controls()).opensAt).toBe(opensAt);

    const resume = await cli(['resume', '--queue', queue.name, '--no-message']);
    expect(resume.code, resume.stderr).toBe(0);
    expect(resume.stderr).toBe(''); // the queue has state now
    expect(await queue.controls()).toMatchObject({ mode: 'open', message: null, admitRatePerSecond: 20 });
    expect((await queue.controls()).version).toBe(scheduled.version + 1);

    // --rate auto gives the rate back: the instances' own option again.
    const auto = await cli(['set', '--queue', queue.name, '--rate', 'auto']);
    expect(auto.code, auto.stderr).toBe(0);
    expect(await queue.controls()).toMatchObject({ admitRatePerSecond: 7 });
    expect(await store.controls(queue.name)).toMatchObject({ admitRatePerSecond: null });
  });

  it('log shows every change with its actor (--actor, else the OS user); limits kept by a running queue refuse the command with exit 2', async () => {
    const name = uniqueName('cli');
    const guarded = new WaitingQueue({ store: new RedisStore({ client }), name, limits: { maxRatePerSecond: 50, maxActive: 10 } });
    await guarded.setControls({ mode: 'paused' }, { actor: 'app' });
    const set = await cli(['set', '--queue', name, '--rate', '20', '--safety-net', 'on', '--actor', 'alice']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/safety net\s+on/);
    expect((await cli(['resume', '--queue', name])).code).toBe(0);
    for (const args of [
      ['set', '--queue', name, '--rate', '51'],
      ['set', '--queue', name, '--max-active', 'none'],
    ]) {
      const refused = await cli(args);
      expect(refused.code, refused.stdout).toBe(2);
      expect(refused.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(refused.stderr).toMatch(/limits\./);
    }
    const log = await cli(['log', '--queue', name, '--json']);
    expect(log.code, log.stderr).toBe(0);
    const { entries } = json<{ entries: Array<{ actor: string | null; patch: object; version: number; at: number }> }>(log);
    expect(entries.map((e) => [e.actor, e.patch, e.version])).toEqual([
      [userInfo().username, { mode: 'open' }, 3],
      ['alice', { admitRatePerSecond: 20, safetyNet: true }, 2],
      ['app', { mode: 'paused' }, 1],
    ]);
    expect(await guarded.controlsLog()).toEqual(entries);
    const text = await cli(['log', '--queue', name, '--limit', '1']);
    expect(text.stdout).toContain('v3');
    expect((await cli(['log', '--queue', name, '--limit', '0'])).code).toBe(2);
  });

  it('inspect shows a READY member and never its token', async () => {
    const queue = appQueue();
    await queue.enter('alice');
    await queue.enter('bob');
    await queue.admit();
    await queue.enter('carol');
    const token = await queue.token('alice');
    expect(token).not.toBeNull();

    const [text, asJson, waiting] = await Promise.all([
      cli(['inspect', '--queue', queue.name, 'alice']),
      cli(['inspect', '--queue', queue.name, 'alice', '--json']),
      cli(['inspect', '--queue', queue.name, 'carol', '--json']),
    ]);
    for (const run of [text, asJson]) {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).not.toContain(token!.entryToken);
      expect(run.stderr).not.toContain(token!.entryToken);
    }
    expect(text.stdout).toMatch(/^status\s+READY$/m);
    expect(json(asJson)).toMatchObject({ memberId: 'alice', status: 'READY', rank: null, tokenExpiresAt: token!.expiresAt });
    expect(json(waiting)).toMatchObject({ memberId: 'carol', status: 'WAITING', rank: 0, tokenExpiresAt: null });
  });

  it('draw reproduces drawOrder, checks the commitment, and verifies a real opening', async () => {
    const seed = randomBytes(32).toString('hex');
    const commitment = createHash('sha256').update(Buffer.from(seed, 'hex')).digest('hex');
    const ids = Array.from({ length: 12 }, (_, i) => `member-${i}`);
    const ok = await cli(['draw', '--seed', seed, '--commitment', commitment, ...ids, '--json']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(json(ok)).toEqual({ seed, commitment, commitmentMatches: true, order: drawOrder(seed, ids) });
    const wrong = await cli(['draw', '--seed', seed, '--commitment', seed, ...ids]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr.trimEnd().split('\n')).toHaveLength(1);

    // A shuffled opening of a real queue: the seed is published at the opening, and the
    // order the command prints is the order the queue admits in.
    const queue = new WaitingQueue({ store: new RedisStore({ client }), name: uniqueName('cli'), admitRatePerSecond: 100 });
    // Far enough ahead for the enters and a command's start on a loaded machine.
    const opensAt = Date.now() + 5000;
    await queue.setControls({ opensAt, shuffle: true });
    for (const id of ids) await queue.enter(id);
    const before = json<{ seed: string | null; commitment: string }>(await cli(['draw', '--queue', queue.name, '--json']));
    expect(before.seed).toBeNull();
    expect(before.commitment).toBe((await queue.controls()).drawCommitment);
    await sleep(Math.max(0, opensAt - Date.now()) + 200);
    const drawn = await cli(['draw', '--queue', queue.name, ...ids, '--json']);
    expect(drawn.code, drawn.stderr).toBe(0);
    const admitted = (await queue.admit()).map((a) => a.memberId);
    expect(json(drawn)).toMatchObject({ seed: (await queue.controls()).drawSeed, commitmentMatches: true, order: admitted });

    // --report: the cohort in entry order, with the seed; its head recomputed by hand.
    const report = await cli(['draw', '--report', '--queue', queue.name, '--json']);
    expect(report.code, report.stderr).toBe(0);
    const cohort = json<{ seed: string; head: string; length: number; hashes: string[] }>(report);
    const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');
    expect(cohort.hashes).toEqual(ids.map((id) => sha1(`${cohort.seed}:${id}`)));
    expect(cohort.head).toBe(cohort.hashes.reduce((head, hash) => sha1(head + hash), '0'.repeat(40)));
    expect((await queue.controls()).cohortCommitment).toEqual({ head: cohort.head, length: ids.length });
    const text = await cli(['draw', '--report', '--queue', queue.name]);
    expect(text.stdout).toContain(cohort.hashes[0]);
    expect(text.stdout).toMatch(/^cohort head\s+[0-9a-f]{40}$/m);
  });

  it('--cluster talks to a Redis Cluster through its seed node', async () => {
    const cluster = await startOneNodeCluster();
    const clusterClient = new Redis.Cluster(cluster.startupNodes, { redisOptions: { maxRetriesPerRequest: 1 } });
    try {
      const queue = new WaitingQueue({ store: new RedisStore({ client: clusterClient }), name: uniqueName('cli') });
      await queue.enter('a');
      const url = `redis://127.0.0.1:${cluster.nodes[0]!.port}`;
      const set = await cli(['set', '--cluster', '--queue', queue.name, '--max-active', '10'], { REDIS_URL: url });
      expect(set.code, set.stderr).toBe(0);
      expect((await queue.controls()).maxActive).toBe(10);
      const status = await cli(['status', '--cluster', '--queue', queue.name, '--json'], { REDIS_URL: url });
      expect(status.code, status.stderr).toBe(0);
      expect(json<{ stats: QueueStats }>(status).stats).toMatchObject({ waiting: 1, totals: { entered: 1 } });
    } finally {
      clusterClient.disconnect();
      await cluster.stop();
    }
  });

  it('fails fast on a wrong URL: exit 1 within operationTimeoutMs + 1 s, one line on stderr', async () => {
    // A closed port (refused at once), and a server that accepts and never answers (the deadline).
    const closed = await freePort();
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      // Node's own start-up (a --help run's time, large on a loaded machine) is not the command's to bound.
      const startup = (await cli(['--help'])).ms;
      const runs = [
        await cli(['status', '--queue', 'orders'], { REDIS_URL: `redis://127.0.0.1:${closed}` }),
        await cli(['pause', '--queue', 'orders', '--redis', `redis://127.0.0.1:${(silent.address() as AddressInfo).port}`]),
      ];
      for (const run of runs) {
        expect(run.code, run.stderr).toBe(1);
        expect(run.ms - startup).toBeLessThan(OPERATION_TIMEOUT_MS + 1000);
        expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
        expect(run.stdout).toBe('');
      }
      expect(runs[0]!.stderr).toMatch(/^waitgate: cannot connect to redis:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/);
      expect(runs[1]!.stderr).toMatch(/^waitgate: no answer from redis:\/\/127\.0\.0\.1:\d+ within 1000 ms$/m);
    } finally {
      silent.close();
    }
  });

  it('watch prints one line a second when stdout is not a terminal, and stops on SIGTERM with exit 0', async () => {
    const queue = appQueue();
    await queue.enter('a');
    const child = spawn(process.execPath, [CLI, 'watch', '--queue', queue.name], {
      env: { ...process.env, REDIS_URL: server.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.split('\n').length > 2) resolve();
      });
      child.once('exit', () => resolve()); // it must not: the assertions below say why
    });
    expect(child.exitCode, stderr).toBeNull();
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) expect(line).toMatch(/^\S+Z mode=open waiting=1 active=0 claimed=0 /);
    expect(stdout).not.toContain('\x1b['); // no redraw codes on a pipe
    expect(stderr).toBe('');
  });
  it('watch exits 0 on Ctrl-C (SIGINT to its process group, as a terminal sends it)', async () => {
    const queue = appQueue();
    await queue.enter('a');
    const child = spawn(process.execPath, [CLI, 'watch', '--queue', queue.name], {
      env: { ...process.env, REDIS_URL: server.url },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group, like a terminal's foreground job
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    process.kill(-child.pid!, 'SIGINT');
    expect(await exited, stderr).toEqual({ code: 0, signal: null });
  });
});

describe('the database number of --redis', { timeout: 30_000 }, () => {
  it('writes to the database the URL names (/3), not db 0', async () => {
    const name = uniqueName('db');
    const run = await cli(['pause', '--queue', name, '--redis', `${server.url}/3`, '--create']);
    expect(run.code, run.stderr).toBe(0);
    const db3 = new Redis(`${server.url}/3`, { maxRetriesPerRequest: 1 });
    try {
      expect(await db3.hget(`{waitgate:${name}}:meta`, 'cm')).toBe('paused');
      expect(await client.exists(`{waitgate:${name}}:meta`)).toBe(0); // db 0 untouched
    } finally {
      db3.disconnect();
    }
  });

  it('refuses a database that is not a number, or that the server has not, with one line and exit 2, writing nothing', async () => {
    const name = uniqueName('db');
    for (const path of ['/abc', '/-1', '/99']) {
      const run = await cli(['pause', '--queue', name, '--redis', `${server.url}${path}`, '--create']);
      expect(run.code, `${path}: ${run.stderr}`).toBe(2);
      expect(run.stderr.trim().split('\n'), path).toHaveLength(1);
      expect(run.stderr).toMatch(/database/);
    }
    expect(await client.exists(`{waitgate:${name}}:meta`)).toBe(0);
  });
});
