// A redis-server the fault tests own and may kill -9, SIGSTOP or restart: unlike
// startRedisServer (redis-server.ts), it keeps one port and one data folder across
// restarts, so a restarted server loads what the killed one had persisted.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { answersPing } from './redis-server.js';

export interface FaultRedis {
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  /** The running server process (a new one after each restart). */
  readonly process: ChildProcess;
  /** Its pid. */
  readonly pid: number;
  /** Everything the server printed, across restarts. */
  readonly log: string;
  /** Sends a signal to the running server. */
  signal(signal: NodeJS.Signals): void;
  /** `kill -9`, and waits until the process is gone. Resolves with the signal that ended it. */
  kill9(): Promise<NodeJS.Signals | null>;
  /** Starts redis-server again with the same port, data folder and arguments; resolves once it answers PING (after loading). */
  restart(): Promise<void>;
  /** Stops the server and removes the data folder. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  }
});

/** True when nothing listens on `port` of the loopback interface (a listen that succeeds, closed at once). */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A free loopback port outside every system's ephemeral range (Linux 32768-60999, macOS and
 * Windows 49152-65535). A killed server's port stays free until restart() only out there:
 * inside the range, while test files run in parallel, another file's freePort() (bind to
 * port 0) may hand it to its own server, and a reconnecting client may even connect to
 * itself (a local port equal to the one it dials), so the client's queued calls would go
 * to something other than the restarted server.
 */
async function restartablePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * 22_000);
    if (await canListen(port)) return port;
  }
  throw new Error('no free port between 10000 and 32000');
}

/** Starts redis-server on a free loopback port (kept across restarts) in a new data folder, with `extraArgs` (e.g. `--appendonly yes`). */
export async function startFaultRedis(extraArgs: string[] = []): Promise<FaultRedis> {
  const port = await restartablePort();
  const dir = mkdtempSync(join(tmpdir(), 'waitgate-fault-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir, '--protected-mode', 'yes', ...extraArgs];
  let log = '';
  let child!: ChildProcess;
  let exited!: Promise<NodeJS.Signals | null>;

  const launch = async () => {
    child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    const c = child;
    c.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
    c.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
    exited = new Promise((resolve) =>
      c.once('exit', (_code, signal) => {
        running.delete(c);
        resolve(signal);
      }),
    );
    const deadline = Date.now() + 15_000;
    while (!(await answersPing(port))) {
      if (c.exitCode !== null || c.signalCode !== null || Date.now() > deadline) {
        c.kill('SIGKILL');
        throw new Error(`redis-server on port ${port} did not start:\n${log}`);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  await launch();

  const isRunning = () => child.exitCode === null && child.signalCode === null;
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    get process() {
      return child;
    },
    get pid() {
      return child.pid!;
    },
    get log() {
      return log;
    },
    signal: (signal) => void child.kill(signal),
    async kill9() {
      if (!isRunning()) return child.signalCode;
      child.kill('SIGKILL');
      return exited;
    },
    async restart() {
      if (isRunning()) throw new Error('restart() needs a stopped server');
      await launch();
    },
    async stop() {
      if (isRunning()) {
        child.kill('SIGCONT');
        child.kill('SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The one-letter state of a process from /proc (R, S, T for stopped, Z, ...), or null when it is gone. */
export function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return /\) (\S)/.exec(stat)?.[1] ?? null;
  } catch {
    return null;
  }
}

/** Files of the AOF folder Redis 7 writes (`appendonlydir/`), with their sizes. */
export function aofFiles(dir: string): Array<{ name: string; size: number }> {
  const aofDir = join(dir, 'appendonlydir');
  if (!existsSync(aofDir)) return [];
  return readdirSync(aofDir).map((name) => ({ name, size: statSync(join(aofDir, name)).size }));
}
