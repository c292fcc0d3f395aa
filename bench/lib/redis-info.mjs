// Reading Redis' own counters: INFO commandstats, INFO memory, SLOWLOG.

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Parses `INFO commandstats` into { command: { calls, usec } }. */
export async function commandStats(client) {
  const text = await client.info('commandstats');
  const stats = {};
  for (const line of text.split('\n')) {
    const m = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line.trim());
    if (m) stats[m[1]] = { calls: Number(m[2]), usec: Number(m[3]) };
  }
  return stats;
}

/** Calls per command between two commandStats() readings (only commands that moved). */
export function diffStats(before, after) {
  const diff = {};
  for (const [cmd, a] of Object.entries(after)) {
    const b = before[cmd] ?? { calls: 0, usec: 0 };
    if (a.calls !== b.calls) diff[cmd] = { calls: a.calls - b.calls, usec: a.usec - b.usec };
  }
  return diff;
}

/** Commands a client sent (scripts count once); the commands run inside scripts are listed apart. */
export const SCRIPT_INNER = new Set([
  'time', 'hget', 'hset', 'hmget', 'hincrby', 'hdel', 'hexists', 'zadd', 'zrem', 'zrank', 'zscore', 'zcard', 'zcount',
  'zrange', 'zrangebyscore', 'zremrangebyscore', 'zpopmin',
]);

/**
 * Splits a commandstats diff: `scripts` = EVAL/EVALSHA calls (what a client sends),
 * `all` = every command Redis ran, including those inside the scripts.
 * Monitoring commands (info, slowlog, config, ping, client) are left out of both.
 */
export function countCommands(diff) {
  let scripts = 0;
  let all = 0;
  for (const [cmd, { calls }] of Object.entries(diff)) {
    if (/^(info|slowlog|config|ping|client|select|hello)/.test(cmd)) continue;
    all += calls;
    if (cmd === 'evalsha' || cmd === 'eval' || cmd === 'evalsha_ro' || cmd === 'eval_ro') scripts += calls;
  }
  return { scripts, all };
}

export async function usedMemory(client) {
  const text = await client.info('memory');
  return Number(/^used_memory:(\d+)/m.exec(text)[1]);
}

/**
 * waitgate's scripts by SHA-1, read from the built package this bench imports
 * (dist/, generated from lua/): { sha1: name }. EVALSHA names its script by SHA-1 only.
 */
export function waitgateScriptShas() {
  const entry = fileURLToPath(import.meta.resolve('waitgate'));
  const dir = dirname(entry);
  const names = {};
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.js'))) {
    const text = readFileSync(join(dir, file), 'utf8');
    for (const m of text.matchAll(/(\w+): \{\s*"numberOfKeys": \d+,\s*"readOnly": (?:true|false),\s*"sha1": "([0-9a-f]{40})"/g)) names[m[2]] = m[1];
  }
  return names;
}

const SCRIPT_COMMANDS = new Set(['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro']);

/**
 * Records the duration of every command Redis runs, from SLOWLOG: `start()` sets
 * slowlog-log-slower-than (µs; 0 logs every command) and a long slowlog, `drain()`
 * reads and empties it atomically (MULTI: SLOWLOG GET -1, SLOWLOG RESET) and returns
 * the client commands as { id, at, us, command, script, keys, tag, inner } (`script`:
 * the waitgate script's name for EVALSHA of one of waitgate's scripts, 'EVAL (first
 * run: sent whole)' for a script sent whole (ioredis after NOSCRIPT), null for a plain command; `tag`: the hash tag of the first key,
 * `{waitgate:<name>}`; `inner`: the commands the script ran, { command, us }, which
 * SLOWLOG lists apart). `us` is wall time in Redis, including any time Redis waited
 * for a CPU.
 * Drain often enough that the log never fills: `overflowed` counts drains that
 * came back full (entries may have been lost).
 */
export function slowlogRecorder(control, { slowerThanUs = 0, maxLen = 200_000 } = {}) {
  const shas = waitgateScriptShas();
  let saved = null;
  const recorder = {
    overflowed: 0,
    async start() {
      saved = { slower: (await control.config('GET', 'slowlog-log-slower-than'))[1], len: (await control.config('GET', 'slowlog-max-len'))[1] };
      await control.config('SET', 'slowlog-max-len', String(maxLen));
      await control.config('SET', 'slowlog-log-slower-than', String(slowerThanUs));
      await control.slowlog('RESET');
    },
    async stop() {
      if (!saved) return;
      await control.config('SET', 'slowlog-log-slower-than', saved.slower);
      await control.config('SET', 'slowlog-max-len', saved.len);
      saved = null;
    },
    async drain() {
      const [[, raw]] = await control.multi().slowlog('GET', -1).slowlog('RESET').exec();
      if (raw.length >= maxLen) recorder.overflowed++;
      // Oldest first. Commands a script ran are logged too, before the script itself, with
      // the client '?:0': they are attached to that script's entry as `inner`.
      const entries = [];
      let inner = [];
      for (const [id, at, us, args, clientAddr] of raw.reverse()) {
        const command = String(args[0] ?? '').toLowerCase();
        if (clientAddr === '?:0') {
          inner.push({ command, us: Number(us) });
          continue;
        }
        const isScript = SCRIPT_COMMANDS.has(command);
        const numKeys = isScript ? Number(args[2]) || 0 : 0;
        const keys = isScript ? args.slice(3, 3 + numKeys).map(String) : args.slice(1, 2).map(String);
        const script = !isScript ? null : command.startsWith('evalsha') ? (shas[String(args[1])] ?? `unknown ${String(args[1]).slice(0, 12)}`) : command.startsWith('eval') ? 'EVAL (first run: sent whole)' : 'FCALL';
        const tag = /^(\{[^}]*\})/.exec(keys[0] ?? '')?.[1] ?? null;
        entries.push({ id: Number(id), at: Number(at), us: Number(us), command, script, keys, tag, inner: isScript ? inner : [] });
        inner = [];
      }
      return entries;
    },
  };
  return recorder;
}

/** CPU time (user + system, µs) of Redis' main thread so far (INFO cpu, Redis 7+). */
export async function redisMainThreadCpuUs(client) {
  const text = await client.info('cpu');
  const get = (name) => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(text)?.[1] ?? NaN);
  return Math.round((get('used_cpu_user_main_thread') + get('used_cpu_sys_main_thread')) * 1e6);
}

/**
 * CPU time (µs) of the whole redis-server process so far: used_cpu_user + used_cpu_sys
 * of INFO cpu (getrusage: every thread, including background ones). Deltas over a
 * measured window divided by its operations give Redis CPU per operation.
 */
export async function redisProcessCpuUs(client) {
  const text = await client.info('cpu');
  const get = (name) => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(text)?.[1] ?? NaN);
  return Math.round((get('used_cpu_user') + get('used_cpu_sys')) * 1e6);
}
