// `node bench/simulate-bots.mjs --short` (issue #26): the bot swarm on 200 humans and 2,000 bots,
// three scenarios, run in CI so it cannot break unseen. It asserts what the gate promises
// whatever the machine's speed: bots that do not solve never get in nor cost the store a call,
// bots that solve get in, and without the gate bots do. Not speed, not the full run's shares.
// Needs dist/ (npm run build) and redis-server, like test/cli.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runBenchScript } from '../support/bench-script.js';

const SIMULATE = fileURLToPath(new URL('../../bench/simulate-bots.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'waitgate-sim-bots-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  key: string;
  identity: string;
  humans: number;
  admissions: { total: number; humans: number; bots: number };
  humansShare: number;
  humansMedianWaitSeconds: number;
  bots: { entered: number; solved: number };
  storeCalls: { humans: number; bots: number };
  requests: { botsByStatus: Record<string, number> };
  redis: { commands: number };
}

describe('npm run simulate:bots -- --short', () => {
  it('runs three scenarios: the gate keeps out bots that do not solve, at no store cost; without it bots get in', { timeout: 180_000 }, async () => {
    const out = join(dir, 'short.json');
    const { code, output } = await runBenchScript(SIMULATE, ['--short'], { SIM_OUT: out });
    expect(code, output).toBe(0);
    const result = JSON.parse(readFileSync(out, 'utf8')) as { short: boolean; runs: Run[] };
    expect(result.short).toBe(true);
    const run = (key: string): Run => result.runs.find((r) => r.key === key)!;
    expect(result.runs.map((r) => r.key)).toEqual(['no-gate', 'gate', 'gate-solving']);

    const open = run('no-gate');
    expect(open.identity).toBe('off');
    expect(open.admissions.bots).toBeGreaterThan(0);
    expect(open.admissions.humans + open.admissions.bots).toBe(open.admissions.total);
    expect(open.storeCalls.bots).toBeGreaterThan(open.storeCalls.humans);

    const gated = run('gate');
    expect(gated.admissions.humans).toBeGreaterThan(0);
    expect(gated.admissions.bots).toBe(0);
    expect(gated.humansShare).toBe(1);
    expect(gated.bots.entered).toBe(0);
    expect(gated.storeCalls.bots).toBe(0); // a challenge writes nothing and reads nothing
    expect(gated.requests.botsByStatus['401']).toBeGreaterThan(0);
    expect(Object.keys(gated.requests.botsByStatus)).toEqual(['401']);
    expect(gated.humansMedianWaitSeconds).toBeGreaterThan(0);

    const solving = run('gate-solving');
    expect(solving.bots.solved).toBeGreaterThan(0);
    expect(solving.bots.entered).toBeGreaterThan(0);
    expect(solving.admissions.humans).toBeGreaterThan(0);
    for (const r of result.runs) expect(r.redis.commands).toBeGreaterThan(0);
  });
});
