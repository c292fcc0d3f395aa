// The help texts: the global one (every command) and one per command, from spec.ts.

import { COMMANDS, GLOBAL_FLAGS, type CommandSpec, type Flags } from './spec.js';

const WIDTH = 26;

function flagLines(flags: Flags): string[] {
  return Object.entries(flags).map(([name, spec]) => {
    const left = `${spec.short ? `-${spec.short}, ` : ''}--${name}${spec.value ? ` <${spec.value}>` : ''}`;
    return `  ${left.padEnd(WIDTH)}${spec.description}`;
  });
}

/** Word-wraps a paragraph at 80 columns, indented by two spaces. */
function wrap(text: string, width = 78): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(`  ${line}`);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(`  ${line}`);
  return lines;
}

export function globalHelp(): string {
  return [
    'waitgate: operate a waitgate queue (a flash sale waiting line) on Redis',
    '',
    'Usage: waitgate <command> --queue <name> [--redis <url>] [flags]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${`${c.name}${c.args.hint ? ` ${c.args.hint}` : ''}`.padEnd(WIDTH)}${c.summary}`),
    `  ${'help [command]'.padEnd(WIDTH)}this help, or a command's`,
    '',
    'Global flags:',
    ...flagLines(GLOBAL_FLAGS),
    '',
    'Exit status: 0 success, 1 failure (one line on stderr), 2 usage error.',
    "Run 'waitgate <command> --help' for a command's flags and examples.",
    '',
  ].join('\n');
}

export function commandHelp(command: CommandSpec): string {
  const own = Object.keys(command.flags).length > 0;
  return [
    `waitgate ${command.name}: ${command.summary}`,
    '',
    `Usage: waitgate ${command.name} ${command.usage}`,
    '',
    ...command.details.flatMap((paragraph) => [...wrap(paragraph), '']),
    ...(own ? ['Flags:', ...flagLines(command.flags), ''] : []),
    'Global flags:',
    ...flagLines(GLOBAL_FLAGS),
    '',
    'Examples:',
    ...command.examples.map((e) => `  ${e}`),
    '',
  ].join('\n');
}
