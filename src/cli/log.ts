// waitgate log: the audit trail of the controls, newest first.

import type { ControlsLogEntry } from '../types.js';
import type { Values } from './args.js';
import { withQueue } from './commands.js';
import { print, printJson, type Io } from './io.js';
import { parseNumber } from './patch.js';

/** What `log --json` prints. */
export interface LogJson {
  queue: string;
  entries: ControlsLogEntry[];
}

/** One line per change: time, version, actor, patch (and a draw's commitment). */
export function logText(queue: string, entries: readonly ControlsLogEntry[]): string {
  if (entries.length === 0) return `queue ${queue}: no change of the controls recorded`;
  return entries
    .map((e) => {
      const draw = e.drawCommitment ? `  draw commitment ${e.drawCommitment}` : '';
      return `${new Date(e.at).toISOString()}  v${e.version}  ${e.actor ?? '(no actor)'}  ${JSON.stringify(e.patch)}${draw}`;
    })
    .join('\n');
}

export function runLog(values: Values, io: Io): Promise<void> {
  const limit = typeof values.limit === 'string' ? parseNumber('limit', values.limit, 'log') : undefined;
  return withQueue(values, io, 'log', async (c) => {
    const entries = await c.queue.controlsLog(limit === undefined ? {} : { limit });
    if (values.json) printJson(io.stdout, { queue: c.name, entries } satisfies LogJson);
    else print(io.stdout, logText(c.name, entries));
  });
}
