// What the waitgate command accepts: its global flags and, per command, flags, arguments,
// help text and examples. One table, read by the parser and by the help.

/** One flag, in node:util parseArgs's shape plus what the help shows. */
export interface FlagSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** The value's placeholder in the help, for a string flag. */
  value?: string;
  description: string;
}

export type Flags = Record<string, FlagSpec>;

export type CommandName = 'status' | 'watch' | 'pause' | 'resume' | 'close' | 'passthrough' | 'set' | 'schedule' | 'inspect' | 'draw' | 'log';

export interface CommandSpec {
  name: CommandName;
  /** One line for the command list. */
  summary: string;
  /** What follows `waitgate <name>` in the usage line. */
  usage: string;
  /** Paragraphs of the command's own help. */
  details: string[];
  flags: Flags;
  /** How many arguments after the command name it takes, and how the command list names them. */
  args: { min: number; max: number; hint?: string };
  examples: string[];
}

export const GLOBAL_FLAGS: Flags = {
  redis: { type: 'string', value: 'url', description: 'Redis URL, redis:// or rediss:// (default: $REDIS_URL)' },
  cluster: { type: 'boolean', description: 'the URL is a seed node of a Redis Cluster' },
  queue: { type: 'string', value: 'name', description: "the queue's name (its `name` option)" },
  prefix: { type: 'string', value: 'prefix', description: 'the RedisStore prefix option (default "waitgate")' },
  json: { type: 'boolean', description: 'print JSON: the figures, or the controls after a change' },
  help: { type: 'boolean', short: 'h', description: 'show help (also: waitgate <command> --help)' },
};

/** Every command that writes the controls takes them. */
const CREATE_FLAG: Flags = {
  create: {
    type: 'boolean',
    description:
      'write to a queue that has no state yet (set up before anyone entered); without it such a write is refused, as --queue or --prefix may be a typo',
  },
  actor: { type: 'string', value: 'name', description: 'who makes the change, recorded in the controls log (default: the OS user)' },
};

const MESSAGE_FLAGS: Flags = {
  message: { type: 'string', value: 'text', description: 'a message for waiting members (up to 280 characters)' },
  'no-message': { type: 'boolean', description: 'remove the message' },
};

const modeCommand = (name: CommandName, summary: string, details: string[], examples: string[]): CommandSpec => ({
  name,
  summary,
  usage: '--queue <name> [--message <text> | --no-message]',
  details: [...details, 'Writes the mode (and the message when one of the message flags is given), nothing else, then prints the controls in force.'],
  flags: { ...MESSAGE_FLAGS, ...CREATE_FLAG },
  args: { min: 0, max: 0 },
  examples,
});

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: 'status',
    summary: "the queue's figures and controls",
    usage: '--queue <name> [--json]',
    details: [
      'Reads the figures (waiting, active, claimed, admissions per second, totals, the wait of the last 10 minutes) and the controls. Reads only: changes nothing.',
      'A control never set through the controls (rate, burst, max active) is each app instance\'s own constructor option, which the command cannot see: it is shown as "instances\' option" (in JSON: null, and named in `controls.unset`).',
    ],
    flags: {},
    args: { min: 0, max: 0 },
    examples: ['waitgate status --redis redis://10.0.0.5:6379 --queue orders', 'REDIS_URL=redis://10.0.0.5:6379 waitgate status --queue orders --json'],
  },
  {
    name: 'watch',
    summary: 'a live view of the queue, redrawn every second',
    usage: '--queue <name> [--json]',
    details: [
      'Shows waiting, active against max active, admissions per second with a sparkline of the last 60 s, the totals, the wait (p50, p90, max) and the controls, redrawn in place every second until Ctrl-C.',
      'When stdout is not a terminal it prints one line a second instead (with --json, one JSON object a line). Reads only.',
    ],
    flags: {},
    args: { min: 0, max: 0 },
    examples: ['waitgate watch --queue orders', 'waitgate watch --queue orders --json > orders.ndjson'],
  },
  modeCommand(
    'pause',
    'stop admitting; members keep their places',
    ['Mode paused: members still enter and poll and keep their places, nobody is admitted, tokens already issued stay valid.'],
    ["waitgate pause --queue orders --message 'Back in five minutes'"],
  ),
  modeCommand(
    'resume',
    'admit again (mode open)',
    ['Mode open. The message stays unless --no-message (or a new --message) is given.'],
    ['waitgate resume --queue orders --no-message'],
  ),
  modeCommand(
    'close',
    'refuse new members (e.g. sold out)',
    [
      'Mode closed: a member who is neither waiting nor holding a token cannot enter; waiting members keep their places (resume restores them) but nobody is admitted; issued tokens stay valid.',
    ],
    ["waitgate close --queue orders --message 'Sold out, thank you!'"],
  ),
  modeCommand(
    'passthrough',
    'let everyone through, ignoring the rate and max active',
    ['Mode passthrough: a new member gets a token at once and waiting members are all admitted (in bounded batches). Tokens stay single-use.'],
    ['waitgate passthrough --queue orders'],
  ),
  {
    name: 'set',
    summary: 'change the rate, burst, max active, safety net, stock or message',
    usage: '--queue <name> [--rate <n|auto>] [--burst <n>] [--max-active <n|none>] [--safety-net <on|off>] [--stock <n|none>] [--message <text> | --no-message]',
    details: [
      'Writes only the fields given (at least one), validated as setControls validates them, then prints the controls in force. Every app instance applies them on its next call.',
    ],
    flags: {
      rate: {
        type: 'string',
        value: 'n|auto',
        description: "admissions per second, over every instance (> 0); auto gives the rate back (adaptive admission, or the instances' option)",
      },
      burst: { type: 'string', value: 'n', description: 'the most one admission step can admit (1-10000)' },
      'max-active': { type: 'string', value: 'n|none', description: 'the most members holding a token at once; none: no cap' },
      'safety-net': { type: 'string', value: 'on|off', description: 'instant entry while nobody waits and the rate and cap allow (the line forms only beyond them)' },
      stock: { type: 'string', value: 'n|none', description: 'units left to sell: at 0 the queue closes with the sold-out message; none: no stock' },
      ...MESSAGE_FLAGS,
      ...CREATE_FLAG,
    },
    args: { min: 0, max: 0 },
    examples: ['waitgate set --queue orders --rate 20 --max-active 400', 'waitgate set --queue orders --max-active none', 'waitgate set --queue orders --safety-net on --stock 100'],
  },
  {
    name: 'schedule',
    summary: 'open at a set time, optionally with a shuffled pre-queue',
    usage: '--queue <name> (--opens-at <time> [--shuffle | --no-shuffle] | --cancel) [--message <text> | --no-message]',
    details: [
      'Until --opens-at (an ISO 8601 time with a time zone, or epoch milliseconds; judged by Redis time) members join a pre-queue and nobody is admitted. At the opening the pre-queue goes ahead of everyone who enters later: in entry order, or with --shuffle in the order of a seeded random draw whose commitment is published now and its seed at the opening (see waitgate draw).',
      '--cancel removes the schedule: the queue is open now, and a pre-queue is placed ahead as at an opening (in its draw order if shuffled). --no-shuffle calls a pending draw off (only while nobody is in the pre-queue).',
      'A time in the past is refused. Writes only the fields given.',
    ],
    flags: {
      'opens-at': { type: 'string', value: 'time', description: 'when the queue opens: 2026-12-24T10:00:00Z, or epoch ms' },
      shuffle: { type: 'boolean', description: 'draw the pre-queue at random at the opening' },
      'no-shuffle': { type: 'boolean', description: 'no draw: the pre-queue opens in entry order' },
      cancel: { type: 'boolean', description: 'remove the schedule: open now' },
      ...MESSAGE_FLAGS,
      ...CREATE_FLAG,
    },
    args: { min: 0, max: 0 },
    examples: [
      'waitgate schedule --queue orders --opens-at 2026-12-24T10:00:00Z --shuffle',
      'waitgate schedule --queue orders --opens-at 1798106400000',
      'waitgate schedule --queue orders --cancel',
    ],
  },
  {
    name: 'log',
    summary: 'the audit trail: who changed the controls, when, and how',
    usage: '--queue <name> [--limit <n>] [--json]',
    details: [
      'Prints the last changes of the controls, newest first: the time (Redis), the actor, the version after the change and the patch. Every write (the library, the dashboard, this command) is recorded, with the commitment of a draw it started; a sale that sold out records its own closing (actor waitgate:stock). The store keeps the last 1,000.',
    ],
    flags: { limit: { type: 'string', value: 'n', description: 'how many changes (1-1000, default 50)' } },
    args: { min: 0, max: 0 },
    examples: ['waitgate log --queue orders', 'waitgate log --queue orders --limit 5 --json'],
  },
  {
    name: 'inspect',
    summary: "one member's state (never its token)",
    usage: '--queue <name> <member> [--json]',
    details: [
      "Shows the member's status (WAITING, READY, CLAIMED or NOT_ENTERED), rank, and when its token, lease or pick-up time runs out. Never prints a token. Reads only: it is not a sign of life and does not pick a token up.",
    ],
    flags: {},
    args: { min: 1, max: 1, hint: '<member>' },
    examples: ['waitgate inspect --queue orders member-1042'],
  },
  {
    name: 'draw',
    summary: "verify a shuffled opening's draw",
    usage: '(--seed <hex> [--commitment <hex>] | --queue <name>) [<member>...] [--file <path|->] [--json] | --report --queue <name> [--json]',
    details: [
      'Prints the given members in draw order: by increasing first 40 bits (10 hex digits) of SHA-1("<seed hex>:<member id>"), ties by the id\'s UTF-8 bytes (drawOrder from waitgate). Member ids come from the arguments and/or --file (one per line; - reads stdin).',
      "With --commitment, checks that it is the SHA-256 of the seed's bytes (exit 1 if not). With --queue (and --redis or $REDIS_URL) the seed and commitment are read from the queue's controls; the seed is published at the opening, so before it only the commitment is shown. --seed and --queue together check the given seed against the queue.",
      'With --report (after the opening) lists the cohort: SHA-1("<seed hex>:<member id>") of each member who joined the shuffled pre-queue, in entry order, with the seed and the cohort head. Anyone can recompute the head (head0 = 40 zeros, head = SHA-1(head hex + hash hex) per entry) and the draw order (hashes by their first 10 hex digits); a member finds its own hash in the list.',
    ],
    flags: {
      seed: { type: 'string', value: 'hex', description: 'the draw seed, 64 hex digits (controls drawSeed)' },
      commitment: { type: 'string', value: 'hex', description: 'the published commitment, 64 hex digits (controls drawCommitment)' },
      file: { type: 'string', value: 'path', description: 'read member ids from a file, one per line (- for stdin)' },
      report: { type: 'boolean', description: "list the queue's cohort: salted member hashes in entry order, with the seed" },
    },
    args: { min: 0, max: Number.POSITIVE_INFINITY, hint: '[<member>...]' },
    examples: ['waitgate draw --seed "$SEED" --commitment "$COMMITMENT" alice bob carol', 'waitgate draw --queue orders --file entrants.txt', 'waitgate draw --report --queue orders --json'],
  },
];

export function commandSpec(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}
