// waitgate draw: recomputes a shuffled opening's order from the seed (drawOrder), and checks
// the seed against the commitment published before the opening. Needs Redis only to read
// the seed and commitment from a queue's controls.

import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { drawOrder } from '../controls.js';
import type { Values } from './args.js';
import { withQueue } from './commands.js';
import { controlsView } from './controls-view.js';
import { CommandFailure, UsageError } from './errors.js';
import { table } from './format.js';
import { print, printJson, type Io } from './io.js';

/** What `draw --json` prints. */
export interface DrawJson {
  /** The seed used (null before the opening, when only the commitment is published). */
  seed: string | null;
  commitment: string | null;
  /** Whether SHA-256 of the seed's bytes is the commitment; null when either is missing. */
  commitmentMatches: boolean | null;
  /** The members in draw order (empty without a seed or members). */
  order: string[];
}

const HEX_64 = /^[0-9a-fA-F]{64}$/;

function hexFlag(values: Values, flag: 'seed' | 'commitment'): string | null {
  const value = values[flag];
  if (typeof value !== 'string') return null;
  if (!HEX_64.test(value.trim())) throw new UsageError(`--${flag}: must be 64 hex digits`, 'draw');
  return value.trim().toLowerCase();
}

/** SHA-256 of the seed's 32 bytes, hex: what the commitment must be. */
export function commitmentOf(seedHex: string): string {
  return createHash('sha256').update(Buffer.from(seedHex, 'hex')).digest('hex');
}

/** Member ids from the arguments and the --file (one a line; blank lines skipped). */
async function memberIds(values: Values, args: string[], io: Io): Promise<string[]> {
  const ids = [...args];
  const file = values.file;
  if (typeof file === 'string') {
    let text: string;
    try {
      text = file === '-' ? await readAll(io.stdin) : await readFile(file, 'utf8');
    } catch (error) {
      throw new CommandFailure(`cannot read ${file === '-' ? 'stdin' : file}: ${(error as Error).message}`, { cause: error });
    }
    ids.push(...text.split(/\r?\n/).filter((line) => line.trim() !== ''));
  }
  return ids;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** `draw --report --queue <name>`: the cohort (salted hashes in entry order) with the seed, as queue.drawReport() gives it. */
async function runReport(values: Values, io: Io): Promise<void> {
  if (values.queue === undefined && values.redis === undefined) throw new UsageError('--report reads a queue: give --queue <name>', 'draw');
  const report = await withQueue(values, io, 'draw', (c) => c.queue.drawReport());
  if (report.commitment === null) throw new CommandFailure(`queue ${String(values.queue)} has no draw (no shuffled opening was scheduled)`);
  if (values.json) printJson(io.stdout, report);
  else {
    const rows: Array<[string, string]> = [
      ['seed', report.seed ?? '(not published yet: it is published at the opening)'],
      ['commitment', report.commitment],
      ['cohort head', report.head ?? '-'],
      ['cohort', `${report.length} entries${report.seed === null ? ' (listed after the opening)' : ''}`],
    ];
    const width = String(report.hashes.length).length;
    print(io.stdout, [table(rows), ...report.hashes.map((hash, i) => `${String(i + 1).padStart(width)}  ${hash}`)].join('\n'));
  }
}

export async function runDraw(values: Values, args: string[], io: Io): Promise<void> {
  if (values.report) return runReport(values, io);
  let seed = hexFlag(values, 'seed');
  let commitment = hexFlag(values, 'commitment');
  const fromQueue = values.queue !== undefined || values.redis !== undefined;
  if (!fromQueue && seed === null) throw new UsageError('give --seed <hex>, or --queue <name> to read it from the queue', 'draw');
  const ids = await memberIds(values, args, io);

  if (fromQueue) {
    const controls = await withQueue(values, io, 'draw', async (c) => controlsView(await c.storedControls()));
    if (controls.drawCommitment === null) throw new CommandFailure(`queue ${String(values.queue)} has no draw (no shuffled opening was scheduled)`);
    if (commitment !== null && commitment !== controls.drawCommitment) {
      throw new CommandFailure(`--commitment differs from the queue's (${controls.drawCommitment})`);
    }
    commitment = controls.drawCommitment;
    if (seed !== null && controls.drawSeed !== null && seed !== controls.drawSeed) {
      throw new CommandFailure(`--seed differs from the seed the queue published (${controls.drawSeed})`);
    }
    seed ??= controls.drawSeed;
  }

  const matches = seed !== null && commitment !== null ? commitmentOf(seed) === commitment : null;
  const order = seed === null ? [] : drawOrder(seed, ids);
  if (values.json) printJson(io.stdout, { seed, commitment, commitmentMatches: matches, order } satisfies DrawJson);
  else {
    const rows: Array<[string, string]> = [
      ['seed', seed ?? '(not published yet: it is published at the opening)'],
      ['commitment', commitment === null ? '-' : `${commitment}${matches === null ? '' : matches ? ' (matches the seed)' : ' (DOES NOT match the seed)'}`],
      ['members', String(order.length)],
    ];
    const width = String(order.length).length;
    print(io.stdout, [table(rows), ...order.map((id, i) => `${String(i + 1).padStart(width)}  ${id}`)].join('\n'));
  }
  if (matches === false) throw new CommandFailure('the commitment is not the SHA-256 of the seed: this seed is not the one committed to');
  if (fromQueue && seed === null && ids.length > 0)
    throw new CommandFailure('the seed is not published yet (it is, at the opening): nothing to verify against');
}
