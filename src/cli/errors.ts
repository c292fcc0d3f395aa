// The two ways the waitgate command fails, and how any error becomes an exit code and one line.

import { isWaitgateError } from '../errors.js';

/** Exit codes of the waitgate command. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** The operator's command line is wrong (unknown command or flag, bad value): exit 2, with a hint to --help. */
export class UsageError extends Error {
  /** The command whose help to point at; undefined for the global help. */
  readonly command: string | undefined;

  constructor(message: string, command?: string) {
    super(message);
    this.name = 'UsageError';
    this.command = command;
  }
}

/** The command ran but could not do its job (Redis unreachable, a draw that does not verify): exit 1. */
export class CommandFailure extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CommandFailure';
  }
}

/** The flag that sets each field of a controls patch, for messages about a bad value. */
const FLAG_OF_FIELD: Record<string, string> = {
  admitRatePerSecond: '--rate',
  admitBurst: '--burst',
  maxActive: '--max-active',
  message: '--message',
  opensAt: '--opens-at',
  shuffle: '--shuffle',
  name: '--queue',
  prefix: '--prefix',
};

/** One line (no line breaks, no stack) for any error, and the exit code it means. */
export function describeError(error: unknown, command: string | undefined): { line: string; code: number } {
  if (error instanceof UsageError) {
    const help = error.command ?? command;
    return { line: `${oneLine(error.message)} (see 'waitgate ${help ? `${help} ` : ''}--help')`, code: EXIT.usage };
  }
  if (error instanceof CommandFailure) return { line: oneLine(error.message), code: EXIT.failure };
  if (isWaitgateError(error)) {
    // A value the operator gave, refused by the library's own validation (WaitgateConfigError
    // names the field) or a member id it does not accept: a usage error.
    if (error.code === 'CONFIG_INVALID') {
      const field = (error as { option?: string }).option ?? '';
      const reason = error.message.replace(/^Invalid option "[^"]*": /, '');
      const flag = FLAG_OF_FIELD[field];
      const what = flag ? `${flag} (${field})` : field;
      return { line: `${oneLine(`${what}: ${reason}`)} (see 'waitgate ${command ? `${command} ` : ''}--help')`, code: EXIT.usage };
    }
    if (error.code === 'INVALID_MEMBER_ID') return { line: `member id: ${oneLine(error.message)}`, code: EXIT.usage };
    return { line: oneLine(error.message), code: EXIT.failure };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { line: oneLine(message), code: EXIT.failure };
}

/** Collapses line breaks, so that every failure is exactly one line on stderr. */
export function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}
