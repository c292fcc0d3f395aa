// Reading Redis' own counters: INFO commandstats, INFO memory, SLOWLOG.

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
