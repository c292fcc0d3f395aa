// Checks that a Lua script names every key it touches as KEYS[n], never builds one.
//
// Redis Cluster routes a script by its declared keys, and an ACL limited to a key prefix
// checks the keys a script touches; a key name made inside the script (KEYS[1] .. ':x',
// ARGV[2], a literal '{waitgate:q}:x', string.format(...)) escapes both. So every key
// argument of a redis.call / redis.pcall must be, literally, KEYS[<integer>], or a
// parameter of the enclosing local function that every caller fills with KEYS[<integer>]
// (or, in turn, with such a parameter of its own): that is how the helpers in lua/includes
// take their keys. Anything else is reported (a helper that is never called never runs,
// and passes). It reads tokens, so comments and strings that merely mention redis.call
// are ignored.

interface Token {
  kind: 'name' | 'string' | 'number' | 'op';
  value: string;
  line: number;
}

/** Where keys sit in a command's arguments (after the command name). */
type KeySpec = 'none' | 'first' | 'all';

/**
 * The commands the checker knows, with their key positions. A command missing here is
 * reported (add it with its key positions from the Redis docs) rather than guessed.
 */
export const KEY_POSITIONS: Readonly<Record<string, KeySpec>> = {
  TIME: 'none',
  // A channel is not a key: in a Cluster, PUBLISH reaches every node whatever its name.
  PUBLISH: 'none',
  DEL: 'all',
  UNLINK: 'all',
  EXISTS: 'all',
  MGET: 'all',
  TOUCH: 'all',
  ...Object.fromEntries(
    [
      'GET',
      'SET',
      'INCR',
      'INCRBY',
      'DECR',
      'EXPIRE',
      'PEXPIRE',
      'PEXPIREAT',
      'PTTL',
      'TTL',
      'TYPE',
      'PERSIST',
      'HGET',
      'HSET',
      'HRANDFIELD',
      'HSETNX',
      'HDEL',
      'HMGET',
      'HGETALL',
      'HINCRBY',
      'HEXISTS',
      'HLEN',
      'HKEYS',
      'HVALS',
      'ZADD',
      'LPUSH',
      'LTRIM',
      'LRANGE',
      'ZREM',
      'ZCARD',
      'ZSCORE',
      'ZRANK',
      'ZRANGE',
      'ZRANGEBYSCORE',
      'ZREVRANGEBYSCORE',
      'ZREVRANGE',
      'ZREMRANGEBYSCORE',
      'ZREMRANGEBYRANK',
      'ZPOPMIN',
      'ZPOPMAX',
      'ZCOUNT',
      'ZINCRBY',
      'ZMSCORE',
      'SADD',
      'SREM',
      'SISMEMBER',
      'SCARD',
      'LPUSH',
      'RPUSH',
      'LPOP',
      'RPOP',
      'LLEN',
      'LRANGE',
    ].map((c) => [c, 'first' as const]),
  ),
};

export interface KeyCheck {
  /** redis.call / redis.pcall sites found (0 means nothing was checked). */
  calls: number;
  /** One line per problem, with the line number in the script. */
  violations: string[];
}

/** Checks one script (its full text, helpers inlined). `numberOfKeys` bounds KEYS[n] when given. */
export function checkKeyNames(lua: string, numberOfKeys?: number): KeyCheck {
  const tokens = tokenize(lua);
  const violations: string[] = [];
  const functions = scanFunctions(tokens);
  const text = (ts: readonly Token[]) => ts.map((t) => (t.kind === 'string' ? `'${t.value}'` : t.value)).join(' ');
  const keysIndex = (arg: readonly Token[]): number | null =>
    arg.length === 4 && arg[0]!.value === 'KEYS' && arg[1]!.value === '[' && arg[2]!.kind === 'number' && arg[3]!.value === ']' ? Number(arg[2]!.value) : null;

  // Parameters that must carry a declared key: `${function}#${param index}`, with the site that needs it.
  const pending: Array<{ fn: FunctionInfo; param: number; why: string }> = [];

  /** A key argument is KEYS[n] (checked now) or a parameter of the enclosing function (checked at its callers). */
  const checkKeyArg = (arg: readonly Token[], at: number, why: string) => {
    const line = arg[0]?.line ?? tokens[at]!.line;
    const n = keysIndex(arg);
    if (n !== null) {
      if (!Number.isInteger(n) || n < 1 || (numberOfKeys !== undefined && n > numberOfKeys)) {
        violations.push(`line ${line}: ${why}: KEYS[${arg[2]!.value}] is not one of KEYS[1..${numberOfKeys ?? 'N'}]`);
      }
      return;
    }
    const fn = enclosingFunction(functions, at);
    const param = arg.length === 1 && arg[0]!.kind === 'name' && fn ? fn.params.indexOf(arg[0]!.value) : -1;
    if (!fn || param < 0) {
      violations.push(`line ${line}: ${why}: key argument \`${text(arg)}\` is not KEYS[n]`);
      return;
    }
    pending.push({ fn, param, why });
  };

  let calls = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.value !== 'redis' || t.kind !== 'name') continue;
    const dot = tokens[i + 1];
    const method = tokens[i + 2];
    if (dot?.value === '[') {
      violations.push(`line ${t.line}: redis[...] indexed dynamically`);
      continue;
    }
    if (dot?.value !== '.' || (method?.value !== 'call' && method?.value !== 'pcall')) continue;
    const open = i + 3;
    if (tokens[open]?.value !== '(') {
      violations.push(`line ${t.line}: redis.${method.value} used other than in a direct call (aliased?)`);
      continue;
    }
    calls++;
    const { args } = splitArgs(tokens, open);
    const command = args[0];
    if (!command || command.length !== 1 || command[0]!.kind !== 'string') {
      violations.push(`line ${t.line}: redis.${method.value} with a command that is not a string literal: \`${text(command ?? [])}\``);
      continue;
    }
    const name = command[0]!.value.toUpperCase();
    const spec = KEY_POSITIONS[name];
    if (spec === undefined) {
      violations.push(`line ${t.line}: ${name}: unknown command, add its key positions to KEY_POSITIONS`);
      continue;
    }
    const keyArgs = spec === 'none' ? [] : spec === 'first' ? args.slice(1, 2) : args.slice(1);
    if (spec !== 'none' && keyArgs.length === 0) violations.push(`line ${t.line}: ${name} without a key`);
    for (const arg of keyArgs) checkKeyArg(arg, i, name);
  }

  // Each parameter that reaches a key position: every call of its function must pass a declared key.
  const done = new Set<string>();
  while (pending.length > 0) {
    const { fn, param, why } = pending.pop()!;
    const id = `${fn.start}#${param}`;
    if (done.has(id)) continue;
    done.add(id);
    const where = `${why} via ${fn.name ?? 'an anonymous function'}(${fn.params[param]})`;
    if (fn.name === null) {
      violations.push(`line ${tokens[fn.start]!.line}: ${where}: the function has no local name, so its callers cannot be checked`);
      continue;
    }
    const paramName = fn.params[param]!;
    for (let j = fn.bodyStart; j < fn.end; j++) {
      const t = tokens[j]!;
      if (t.kind !== 'name' || t.value !== paramName || enclosingFunction(functions, j) !== fn) continue;
      // `p = ...`, `p, q = ...` or `local p = ...` inside the function rebuilds (or shadows) the key.
      let k = j + 1;
      while (tokens[k]?.value === ',' && tokens[k + 1]?.kind === 'name') k += 2;
      if (tokens[k]?.value === '=') {
        violations.push(`line ${t.line}: ${where}: the parameter is assigned inside the function`);
      }
    }
    for (let j = 0; j < tokens.length; j++) {
      const t = tokens[j]!;
      if (t.kind !== 'name' || t.value !== fn.name || j === fn.nameAt) continue;
      if (tokens[j - 1]?.value === '.' || tokens[j - 1]?.value === ':') continue; // another table's field of the same name
      if (tokens[j + 1]?.value !== '(') {
        violations.push(`line ${t.line}: ${where}: ${fn.name} is used as a value, so its callers cannot be checked`);
        continue;
      }
      const arg = splitArgs(tokens, j + 1).args[param] ?? [];
      if (arg.length === 0) violations.push(`line ${t.line}: ${where}: ${fn.name} called without that argument`);
      else checkKeyArg(arg, j, where);
    }
  }
  return { calls, violations };
}

interface FunctionInfo {
  /** Index of the `function` token; `nameAt` of its local name (-1 if none). */
  start: number;
  nameAt: number;
  name: string | null;
  params: string[];
  bodyStart: number;
  /** Index of its closing `end`. */
  end: number;
}

/** Every function definition, with its span (blocks: function/if/do/repeat ... end/until). */
function scanFunctions(tokens: readonly Token[]): FunctionInfo[] {
  const functions: FunctionInfo[] = [];
  const stack: Array<FunctionInfo | null> = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind !== 'name') continue;
    if (t.value === 'function') {
      let j = i + 1;
      const nameParts: number[] = [];
      while (tokens[j]?.kind === 'name' || tokens[j]?.value === '.' || tokens[j]?.value === ':') {
        if (tokens[j]!.kind === 'name') nameParts.push(j);
        j++;
      }
      // Only `local function f` and `function f` (a plain name) can be traced to their callers.
      const plain = nameParts.length === 1 && j === i + 2;
      const params: string[] = [];
      if (tokens[j]?.value === '(') {
        j++;
        while (j < tokens.length && tokens[j]!.value !== ')') {
          if (tokens[j]!.kind === 'name') params.push(tokens[j]!.value);
          j++;
        }
      }
      const fn: FunctionInfo = {
        start: i,
        nameAt: plain ? nameParts[0]! : -1,
        name: plain ? tokens[nameParts[0]!]!.value : null,
        params,
        bodyStart: j + 1,
        end: tokens.length,
      };
      functions.push(fn);
      stack.push(fn);
      i = j;
    } else if (t.value === 'if' || t.value === 'do' || t.value === 'repeat') {
      stack.push(null);
    } else if (t.value === 'end' || t.value === 'until') {
      const closed = stack.pop();
      if (closed) closed.end = i;
    }
  }
  return functions;
}

/** The innermost function whose body holds token `at`, or null at the script's top level. */
function enclosingFunction(functions: readonly FunctionInfo[], at: number): FunctionInfo | null {
  let best: FunctionInfo | null = null;
  for (const fn of functions) if (fn.bodyStart <= at && at < fn.end && (!best || fn.start > best.start)) best = fn;
  return best;
}

/** The arguments of a call whose `(` is at `open`, split at top-level commas. */
function splitArgs(tokens: readonly Token[], open: number): { args: Token[][]; close: number } {
  const args: Token[][] = [];
  let current: Token[] = [];
  let depth = 0;
  let i = open + 1;
  for (; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind === 'op' && (t.value === '(' || t.value === '{' || t.value === '[')) depth++;
    if (t.kind === 'op' && (t.value === ')' || t.value === '}' || t.value === ']')) {
      if (depth === 0) break;
      depth--;
    }
    if (depth === 0 && t.kind === 'op' && t.value === ',') {
      args.push(current);
      current = [];
      continue;
    }
    current.push(t);
  }
  if (current.length > 0 || args.length > 0) args.push(current);
  return { args, close: i };
}

/** Lua tokens, without comments, whitespace or the `#!` line. Strings keep their contents (escapes left as written). */
export function tokenize(lua: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  const count = (s: string) => (line += s.split('\n').length - 1);
  if (lua.startsWith('#!')) i = lua.indexOf('\n') < 0 ? lua.length : lua.indexOf('\n');
  /** A long bracket `[==[ ... ]==]` starting at `at`: its end index, or -1 if `at` does not open one. */
  const longBracket = (at: number): { contentStart: number; end: number } | -1 => {
    const m = /^\[(=*)\[/.exec(lua.slice(at, at + 64));
    if (!m) return -1;
    const close = `]${m[1]}]`;
    const end = lua.indexOf(close, at + m[0].length);
    if (end < 0) throw new Error(`line ${line}: unterminated long bracket`);
    return { contentStart: at + m[0].length, end: end + close.length };
  };
  while (i < lua.length) {
    const c = lua[i]!;
    if (c === '\n') {
      line++;
      i++;
    } else if (/\s/.test(c)) {
      i++;
    } else if (lua.startsWith('--', i)) {
      const long = longBracket(i + 2);
      const end = long === -1 ? (lua.indexOf('\n', i) < 0 ? lua.length : lua.indexOf('\n', i)) : long.end;
      count(lua.slice(i, end));
      i = end;
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < lua.length && lua[j] !== c) j += lua[j] === '\\' ? 2 : 1;
      if (j >= lua.length) throw new Error(`line ${line}: unterminated string`);
      tokens.push({ kind: 'string', value: lua.slice(i + 1, j), line });
      count(lua.slice(i, j));
      i = j + 1;
    } else if (c === '[' && longBracket(i) !== -1) {
      const long = longBracket(i) as { contentStart: number; end: number };
      tokens.push({ kind: 'string', value: lua.slice(long.contentStart, long.end - 2), line });
      count(lua.slice(i, long.end));
      i = long.end;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(lua.slice(i))![0];
      tokens.push({ kind: 'name', value: m, line });
      i += m.length;
    } else if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(lua[i + 1] ?? ''))) {
      const m = /^(0[xX][0-9a-fA-F]+|[0-9]*\.?[0-9]+([eE][+-]?[0-9]+)?)/.exec(lua.slice(i))![0];
      tokens.push({ kind: 'number', value: m, line });
      i += m.length;
    } else {
      const op = ['...', '..', '==', '~=', '<=', '>=', '::'].find((o) => lua.startsWith(o, i)) ?? c;
      tokens.push({ kind: 'op', value: op, line });
      i += op.length;
    }
  }
  return tokens;
}
