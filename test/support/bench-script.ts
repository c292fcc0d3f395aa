// Runs a bench script (bench/*.mjs) as `npm run` would, with extra environment, and collects
// its exit code and everything it printed: the pattern of the bench smoke tests (test/bench/).
import { spawn } from 'node:child_process';

export function runBenchScript(file: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
}
