// Spawns a throwaway redis-server on a free loopback port (no persistence), for the
// bench and the simulation. A copy of the small spawn logic of
// test/support/redis-server.ts: bench/ is plain Node and imports no TypeScript.
// It never touches any other Redis (in particular not the one on port 6379).

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function redisServerVersion() {
  const r = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (r.status !== 0) return null;
  return /v=(\S+)/.exec(r.stdout)?.[1] ?? r.stdout.trim();
}

/** A TCP port nobody listens on right now. */
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

/** One raw PING over TCP, so readiness needs no client library. */
function answersPing(port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
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
 * Starts `redis-server` on a free port; resolves once it answers PING.
 * @returns {{ port, url, process, stop(): Promise<void> }}
 */
export async function startRedisServer(extraArgs = []) {
  if (!redisServerVersion()) throw new Error('redis-server is not on PATH (apt-get install redis-server)');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'waitgate-bench-redis-'));
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--protected-mode', 'yes', '--maxmemory-policy', 'noeviction', ...extraArgs],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk.toString()));
  child.stderr.on('data', (chunk) => (output += chunk.toString()));
  const exited = new Promise((resolve) => child.once('exit', () => resolve()));
  // Never leave the server behind if this process dies.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

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
    process: child,
    async stop() {
      process.off('exit', killOnExit);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
