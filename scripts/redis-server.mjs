// @ts-check
// Spawns throwaway redis-server processes on free loopback ports, with no persistence.
// The one copy of this logic: the tests use it through test/support/redis-server.ts,
// the bench and the simulation (plain Node, no TypeScript) import it directly.
// It never touches any other Redis (in particular not the one on port 6379).

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A running server started by {@link startRedisServer}.
 * @typedef {{
 *   readonly port: number;
 *   readonly url: string;
 *   readonly dir: string;
 *   readonly process: import('node:child_process').ChildProcess;
 *   signal(signal: NodeJS.Signals): void;
 *   stop(): Promise<void>;
 * }} RedisServer
 * `dir` is its data folder; `signal` sends a signal (e.g. SIGSTOP / SIGCONT / SIGKILL)
 * to the server process; `stop` stops the server and removes its data folder.
 */

/**
 * @typedef {object} StartOptions
 * @property {string} [dirPrefix] name prefix of the data folder made under os.tmpdir() (default `waitgate-redis-`)
 * @property {boolean} [killOnExit] also SIGKILL the server when this Node process exits before `stop()` (default false)
 */

/**
 * The version of the `redis-server` on PATH (e.g. `7.0.15`), or null when there is none.
 * @returns {string | null}
 */
export function redisServerVersion() {
  const r = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (r.status !== 0) return null;
  return /v=(\S+)/.exec(r.stdout)?.[1] ?? r.stdout.trim();
}

/**
 * True when a `redis-server` binary is on PATH.
 * @returns {boolean}
 */
export function hasRedisServerBinary() {
  return redisServerVersion() !== null;
}

/**
 * A TCP port nobody listens on right now.
 * @returns {Promise<number>}
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * One raw PING over TCP, so readiness needs no client library.
 * @param {number} port
 * @returns {Promise<boolean>}
 */
export function answersPing(port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    /** @param {boolean} ok */
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

/**
 * Starts `redis-server` on a free loopback port with no persistence; resolves once it answers PING.
 * @param {string[]} [extraArgs] more `--name value` arguments, after (so overriding) the defaults
 * @param {StartOptions} [options]
 * @returns {Promise<RedisServer>}
 */
export async function startRedisServer(extraArgs = [], { dirPrefix = 'waitgate-redis-', killOnExit = false } = {}) {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), dirPrefix));
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--protected-mode', 'yes', ...extraArgs],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk.toString()));
  child.stderr.on('data', (chunk) => (output += chunk.toString()));
  /** @type {Promise<void>} */
  const exited = new Promise((resolve) => child.once('exit', () => resolve()));
  // Never leave the server behind if this process dies.
  const kill = () => void child.kill('SIGKILL');
  if (killOnExit) process.once('exit', kill);

  const deadline = Date.now() + 10_000;
  while (!(await answersPing(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`redis-server on port ${port} did not start:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }

  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    process: child,
    signal: (signal) => void child.kill(signal),
    async stop() {
      if (killOnExit) process.off('exit', kill);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The server of the bench and the simulation: {@link startRedisServer} with an explicit
 * `noeviction` policy, a clear error when redis-server is missing, and a kill when the
 * bench process exits without stopping it.
 * @param {string[]} [extraArgs]
 * @returns {Promise<RedisServer>}
 */
export async function startBenchRedisServer(extraArgs = []) {
  if (!redisServerVersion()) throw new Error('redis-server is not on PATH (apt-get install redis-server)');
  return startRedisServer(['--maxmemory-policy', 'noeviction', ...extraArgs], { dirPrefix: 'waitgate-bench-redis-', killOnExit: true });
}
