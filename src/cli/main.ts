// The waitgate command: parse, dispatch, and turn any failure into one line on stderr and
// an exit code (0 success, 1 failure, 2 usage error).

import { parseCommandLine } from './args.js';
import { runChange, runInspect, runStatus } from './commands.js';
import { runDraw } from './draw.js';
import { runLog } from './log.js';
import { EXIT, describeError } from './errors.js';
import { commandHelp, globalHelp } from './help.js';
import { print, type Io } from './io.js';
import { runWatch } from './watch.js';

/** Runs one command line (without node and the script); resolves with the exit code. Never rejects. */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  let command: string | undefined;
  try {
    const invocation = parseCommandLine(argv);
    if (invocation.kind === 'help') {
      print(io.stdout, invocation.command ? commandHelp(invocation.command) : globalHelp());
      return EXIT.ok;
    }
    const { values, args } = invocation;
    command = invocation.command.name;
    switch (invocation.command.name) {
      case 'status':
        await runStatus(values, io);
        break;
      case 'watch':
        await runWatch(values, io);
        break;
      case 'inspect':
        await runInspect(values, args, io);
        break;
      case 'draw':
        await runDraw(values, args, io);
        break;
      case 'log':
        await runLog(values, io);
        break;
      default:
        await runChange(invocation.command.name, values, io);
    }
    return EXIT.ok;
  } catch (error) {
    const { line, code } = describeError(error, command);
    io.stderr.write(`waitgate: ${line}\n`);
    return code;
  }
}
