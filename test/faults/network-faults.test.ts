// F5, network blackhole (RELIABILITY.md): the packets to Redis are dropped while the TCP
// connection stays "up", so only timeouts can notice. Needs `unshare -n` (root) and the
// iptables binary (Debian package `iptables`): the redis-server and the waitgate client
// run together in a fresh network namespace (test/support/fault-netns.mjs), where
// `iptables -A INPUT -p tcp --dport P -j DROP` blackholes the server's port for 2 s and
// touches nothing outside the namespace.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const CHILD = join(root, 'test/support/fault-netns.mjs');
const TIMEOUT_MS = 400; // operationTimeoutMs in the child
const BLACKHOLE_MS = 2000;

interface NetnsResult {
  netns?: string;
  rulesBefore?: string;
  rulesAfter?: string;
  droppedPackets?: number;
  blackholeMs?: number;
  duringCalls?: number;
  duringErrors?: Record<string, number>;
  duringMaxMs?: number;
  duringMinMs?: number;
  recovered?: boolean;
  recoveryMs?: number;
  admittedBeforeStates?: Record<string, number>;
  waitingBeforeStates?: Record<string, number>;
  duringEnteredStates?: Record<string, number>;
  reenterKeptRank?: boolean;
  inUseAfterRecovery?: number;
  claimedAfterLease?: number;
  consumedAfterRecovery?: number;
  tokens?: number;
  lateAdmitted?: number;
  lateAdmittedWithToken?: number;
  stats?: { waiting: number; active: number; claimed: number };
  admittedAfter?: string[];
  failure?: string;
}

function runInNewNetns(): Promise<{ result: NetnsResult; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('unshare', ['-n', process.execPath, CHILD], {
      cwd: root,
      env: { ...process.env, BLACKHOLE_MS: String(BLACKHOLE_MS) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.trim().split('\n').pop();
      if (code !== 0 || !line) return reject(new Error(`netns child exited ${code ?? signal}:\n${stdout}\n${stderr}`));
      resolve({ result: JSON.parse(line) as NetnsResult, stderr });
    });
  });
}

describe('F5: network blackhole (iptables DROP inside unshare -n)', () => {
  beforeAll(() => {
    // Not a skip: without these tools this fault cannot be induced, and that must show.
    const probe = spawnSync('unshare', ['-n', 'sh', '-c', 'iptables -L INPUT -n'], { encoding: 'utf8' });
    if (probe.status !== 0) {
      throw new Error(`this test needs root, 'unshare -n' and the iptables binary (apt-get install iptables): ${probe.error?.message ?? ''} ${probe.stderr}`);
    }
    if (!existsSync(join(root, 'dist/index.js'))) throw new Error('the namespace child imports the built package: run `npm run build` first');
  });

  it('fails every call with StoreUnavailableError within operationTimeoutMs while blackholed, and recovers by itself once the rule is removed', async () => {
    const { result } = await runInNewNetns();
    console.log(`F5 ${JSON.stringify(result)}`);
    expect(result.failure).toBeUndefined();

    // The fault happened, in a namespace of its own: the rule was there, dropped packets, and went away.
    expect(result.netns).toMatch(/^net:\[\d+\]$/);
    expect(result.netns).not.toBe(spawnSync('readlink', ['/proc/self/ns/net'], { encoding: 'utf8' }).stdout.trim());
    expect(result.rulesBefore).not.toMatch(/DROP/);
    expect(result.droppedPackets).toBeGreaterThan(0);
    expect(result.rulesAfter).not.toMatch(/DROP/);
    expect(result.blackholeMs).toBeGreaterThanOrEqual(BLACKHOLE_MS);

    // I7: every call during the blackhole failed with StoreUnavailableError, none hung.
    expect(result.duringCalls).toBeGreaterThan(4);
    expect(result.duringErrors).toEqual({ StoreUnavailableError: result.duringCalls });
    expect(result.duringMinMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50); // a timeout noticed it, not a connection error
    expect(result.duringMaxMs).toBeLessThan(TIMEOUT_MS + 500);

    // I9: the same client recovers with no manual step.
    expect(result.recovered).toBe(true);
    expect(result.recoveryMs).toBeLessThan(15_000);

    // Nothing acknowledged before was lost (admits that timed out may have run late and
    // admitted the waiting ones); the unknown outcomes are safe to retry.
    expect(result.admittedBeforeStates).toEqual({ READY: 20 });
    const waitingBefore = result.waitingBeforeStates!;
    expect((waitingBefore.WAITING ?? 0) + (waitingBefore.READY ?? 0)).toBe(10);
    expect(Object.keys(result.duringEnteredStates!).every((s) => s === 'WAITING' || s === 'READY' || s === 'NOT_ENTERED')).toBe(true);
    expect(result.reenterKeptRank).toBe(true);
    expect(result.claimedAfterLease).toBe(0);
    expect(result.consumedAfterRecovery).toBe(result.tokens);
    expect(result.tokens).toBe(20);
    // Members admitted by an admit whose reply was lost hold a token they find by polling.
    expect(result.lateAdmittedWithToken).toBe(result.lateAdmitted);
    expect(result.stats).toMatchObject({ claimed: 0, active: result.lateAdmitted });
    expect(result.admittedAfter).toContain('after');
  });
});
