// The command line → a command with its flags and arguments, or a UsageError. node:util
// parseArgs in strict mode, with messages of our own (one line each).

import { parseArgs } from 'node:util';
import { UsageError } from './errors.js';
import { COMMANDS, GLOBAL_FLAGS, commandSpec, type CommandSpec, type Flags } from './spec.js';

/** What the command line asks for. */
export type Invocation = { kind: 'help'; command: CommandSpec | undefined } | { kind: 'run'; command: CommandSpec; values: Values; args: string[] };

/** Flag values by flag name: a string or true; absent when not given. */
export type Values = Record<string, string | boolean | undefined>;

/** Every flag any command knows: enough to find the command name before the strict parse. */
const ALL_FLAGS: Flags = Object.assign({}, GLOBAL_FLAGS, ...COMMANDS.map((c) => c.flags));

/**
 * Parses `argv` (without node and the script). Flags may come before or after the
 * command name. `-h`/`--help` anywhere (or `help [command]`) asks for help.
 * @throws {@link UsageError} for an unknown command or flag, a missing value or a stray argument.
 */
export function parseCommandLine(argv: readonly string[]): Invocation {
  const { name, help } = scan(argv);
  if (name === 'help') {
    const topic = argv.slice(argv.indexOf('help') + 1).find((a) => !a.startsWith('-'));
    return { kind: 'help', command: topic === undefined ? undefined : known(topic) };
  }
  if (name === undefined) {
    if (help) return { kind: 'help', command: undefined };
    throw new UsageError('missing command');
  }
  const command = known(name);
  if (help) return { kind: 'help', command };
  const flags = { ...GLOBAL_FLAGS, ...command.flags };
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({
      args: [...argv],
      options: Object.fromEntries(Object.entries(flags).map(([flag, spec]) => [flag, { type: spec.type, ...(spec.short ? { short: spec.short } : {}) }])),
      allowPositionals: true,
      strict: true,
    }) as { values: Values; positionals: string[] };
  } catch (error) {
    throw new UsageError(parseArgsMessage(error, command.name), command.name);
  }
  // The first positional is the command name itself (scan found the same one).
  const args = parsed.positionals.slice(1);
  if (args.length < command.args.min) throw new UsageError(`missing argument: waitgate ${command.name} ${command.usage}`, command.name);
  if (args.length > command.args.max) throw new UsageError(`unexpected argument '${args[command.args.max]}'`, command.name);
  return { kind: 'run', command, values: parsed.values, args };
}

function known(name: string): CommandSpec {
  const command = commandSpec(name);
  if (!command) throw new UsageError(`unknown command '${name}'`);
  return command;
}

/** The command name (the first argument that is neither a flag nor a flag's value) and whether help was asked. */
function scan(argv: readonly string[]): { name: string | undefined; help: boolean } {
  let name: string | undefined;
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      name ??= argv[i + 1];
      break;
    }
    if (arg === '--help' || arg === '-h') help = true;
    else if (arg.startsWith('--') && !arg.includes('=')) {
      if (ALL_FLAGS[arg.slice(2)]?.type === 'string') i++; // its value
    } else if (!arg.startsWith('-') || arg === '-') name ??= arg;
  }
  return { name, help };
}

/** parseArgs's errors, as one short line naming the flag. */
function parseArgsMessage(error: unknown, command: string): string {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  const flag = /'(-[^' ]+)/.exec(message)?.[1] ?? '';
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown flag ${flag} for '${command}'`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (/does not take an argument/.test(message)) return `${flag} takes no value`;
      if (/ambiguous/.test(message)) return `${flag} needs a value (for one starting with '-', write ${flag}=<value>)`;
      return `${flag} needs a value`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${/'([^']*)'/.exec(message)?.[1] ?? ''}`.trim();
    default:
      return message.split('\n')[0] ?? message;
  }
}
