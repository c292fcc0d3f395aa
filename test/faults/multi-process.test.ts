// Many app instances on one Redis: 1, 2, 4 and 8 Node processes, each with its own
// WaitingQueue and connection, admitting in a loop. From Redis-side timestamps
// (expiresAt − TTL is the Redis TIME of issue) check the global rate (I3), no double
// admission and FIFO (I2, I8), and maxActive under claim/consume/release/abandon
// churn (I4). Matrix rows L3, L4, R1.

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore, WaitingQueue } from '../../src/index.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { recordFigures } from '../support/report.js';
import { signingWith } from '../support/signing-keys.js';
import { uniqueName } from '../support/unique.js';

const CHILD = join(import.meta.dirname, '..', 'support', 'multi-admitter.mjs');
const RATE = 50;
const BURST = 50;
const TTL_MS = 60_000;

let server: RedisServer;
let client: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  client = new Redis(server.url);
});
afterAll(async () => {
  client.disconnect();
  await server.stop();
});

type Line =
  | { kind: 'admitted'; memberId: string; expiresAt: number; jws: boolean }
  | { kind: 'consumed'; memberId: string; ok: boolean; again: string | null }
  | { kind: 'error'; message: string }
  | { kind: 'done'; errors: number };

/** With `signing`, every process of the queue issues and verifies signed passes with the same keys (a queue signs or not). */
function runChildren(
  count: number,
  name: string,
  durationMs: number,
  mode: 'admit' | 'churn',
  maxActive?: number,
  signing?: ReturnType<typeof signingWith>,
): Promise<Line[]> {
  return Promise.all(
    Array.from({ length: count }, () => {
      const child = spawn(process.execPath, [CHILD, server.url, name, String(durationMs), mode, ...(maxActive ? [String(maxActive)] : [])], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: signing ? { ...process.env, WAITGATE_TEST_SIGNING: JSON.stringify(signing) } : process.env,
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      return new Promise<Line[]>((resolve, reject) => {
        child.on('exit', (code) => {
          if (code !== 0) return reject(new Error(`admitter exited ${code}: ${stderr}`));
          resolve(
            stdout
              .trim()
              .split('\n')
              .filter(Boolean)
              .map((l) => JSON.parse(l) as Line),
          );
        });
      });
    }),
  ).then((all) => all.flat());
}

async function fill(name: string, members: number, signing?: ReturnType<typeof signingWith>): Promise<WaitingQueue> {
  const queue = new WaitingQueue({ store: new RedisStore({ client }), name, ...(signing ? { signing } : {}) });
  for (let i = 0; i < members; i += 200) {
    // In order, so member index = entry order.
    for (let j = i; j < Math.min(members, i + 200); j++) await queue.enter(`m${String(j).padStart(6, '0')}`);
  }
  return queue;
}

/** The most admissions issued in any window of `windowMs`, by Redis TIME. */
function maxInWindow(times: number[], windowMs: number): number {
  let best = 0;
  for (let lo = 0, hi = 0; hi < times.length; hi++) {
    while (times[hi]! - times[lo]! > windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

describe('many instances on one Redis', () => {
  it.each([1, 2, 4, 8])('%i admitter processes keep the global rate, FIFO, and admit nobody twice', async (processes) => {
    const name = uniqueName('multi');
    const durationMs = 3000;
    await fill(name, 600);
    const lines = await runChildren(processes, name, durationMs, 'admit');
    const admitted = lines.filter((l): l is Extract<Line, { kind: 'admitted' }> => l.kind === 'admitted');
    expect(lines.filter((l) => l.kind === 'error')).toEqual([]);

    // I2: nobody twice.
    const ids = admitted.map((a) => a.memberId);
    expect(new Set(ids).size).toBe(ids.length);

    // I8: admissions follow entry order: sorted by Redis issue time, the member indices increase,
    // and the admitted members are exactly the first k who entered.
    const byTime = [...admitted].sort((a, b) => a.expiresAt - b.expiresAt || a.memberId.localeCompare(b.memberId));
    for (let i = 1; i < byTime.length; i++) {
      if (byTime[i]!.expiresAt > byTime[i - 1]!.expiresAt) expect(byTime[i]!.memberId > byTime[i - 1]!.memberId).toBe(true);
    }
    expect([...ids].sort()).toEqual(Array.from({ length: ids.length }, (_, i) => `m${String(i).padStart(6, '0')}`));

    // I3: in every window of T on Redis TIME, issued <= B + R*T.
    const times = byTime.map((a) => a.expiresAt - TTL_MS);
    const windows = [100, 1000, 2000].map((windowMs) => ({ windowMs, max: maxInWindow(times, windowMs), bound: BURST + (RATE * windowMs) / 1000 }));
    for (const w of windows) expect(w.max).toBeLessThanOrEqual(w.bound);
    recordFigures(`multi-process-${processes}`, {
      processes,
      durationMs,
      entered: 600,
      admitted: admitted.length,
      doubleAdmissions: ids.length - new Set(ids).size,
      windows,
    });
    // And the instances together really drove the bucket (liveness): the burst plus most of the refill.
    expect(admitted.length).toBeGreaterThanOrEqual(BURST + RATE * 2);
    // I3 over the whole run, on Redis TIME (the children start up to a second or more apart
    // on a loaded machine, so the run's span, not durationMs, is what bounds the total).
    const spanMs = times[times.length - 1]! - times[0]!;
    expect(admitted.length).toBeLessThanOrEqual(BURST + (RATE * spanMs) / 1000 + 1);
  });

  // Signed passes (SPEC §15): the four processes share one key set, claim and consume
  // concurrently, and each consumed pass is refused when claimed again.
  it('keeps READY + CLAIMED within maxActive under churn from 4 processes, with signed passes', async () => {
    const name = uniqueName('churn');
    const maxActive = 15;
    const signing = signingWith();
    const queue = await fill(name, 800, signing);
    let maxSeen = 0;
    let samples = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const stats = await queue.stats();
        maxSeen = Math.max(maxSeen, stats.active);
        samples++;
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const lines = await runChildren(4, name, 4000, 'churn', maxActive, signing);
    sampling = false;
    await sampler;

    const admitted = lines.filter((l): l is Extract<Line, { kind: 'admitted' }> => l.kind === 'admitted');
    const consumed = lines.filter((l): l is Extract<Line, { kind: 'consumed' }> => l.kind === 'consumed');
    expect(lines.filter((l) => l.kind === 'error')).toEqual([]);
    expect(samples).toBeGreaterThan(50);
    expect(maxSeen).toBeLessThanOrEqual(maxActive);
    expect(maxSeen).toBe(maxActive); // the cap was really reached, so it was really tested
    // Churn freed slots again and again: far more admitted than the cap.
    expect(admitted.length).toBeGreaterThan(maxActive * 3);
    expect(new Set(admitted.map((a) => a.memberId)).size).toBe(admitted.length);
    expect(admitted.every((a) => a.jws)).toBe(true); // really signed passes
    // Each consume of a claim that was not taken over succeeded, and its pass was used once.
    expect(consumed.filter((c) => c.ok).length).toBeGreaterThan(0);
    expect(consumed.filter((c) => c.ok && c.again !== 'INVALID')).toEqual([]);
    expect((await queue.stats()).active).toBeLessThanOrEqual(maxActive);
    recordFigures('multi-process-churn', {
      processes: 4,
      maxActive,
      maxActiveSeen: maxSeen,
      samples,
      admitted: admitted.length,
      consumed: consumed.filter((c) => c.ok).length,
    });
  });
});
