// Test-only clock jump for one RedisStore queue (RELIABILITY F19): shifts every stored
// timestamp of the queue back by Δ ms, which is what the scripts would see if the
// server clock jumped forward by Δ. Production scripts stay free of test clocks.
//
// What is a timestamp (see lua/includes/tokenRecord.lua, lua/popAndIssue-5.lua):
// - tokens   hash member -> "tokenExpMs|claimExpMs|claimId|token[|pickupByMs][|failedAtMs]": the times, when non-zero;
// - active   zset member -> token deadline (ms);
// - leases   zset member -> claim lease expiry (ms);
// - consumed zset claim id -> forget-after (ms);
// - admits   zset admit id -> forget-after (ms);
// - meta     hash fields bts (bucket refill time), ws (window start), wf (first admission),
//            wl (last recorded admission), mv (line last moved), co (scheduled opening),
//            kt (last entry checkpoint), ows (order window start), ae (adaptive rate evaluated),
//            pz (the pace's last admission step);
// - seen     hash member -> last sign of life (ms);
// - entries  zset: each member is a time (ms), its score an entry score.
// Not timestamps: waiting (scored by entry sequence), meta gen / seq / bt / wc / wp and
// the totals. Not shifted: the wait histograms w0 .. w9 (their minute stands for when
// they were recorded; only stats().waitSeconds reads them).

import type { Redis } from 'ioredis';
import { queueKeys } from '../../src/store/keys.js';

/** Run with EVAL; every key in KEYS (so it also runs under `#!lua` key checks and in a Cluster slot). */
export const SHIFT_CLOCK_LUA = `#!lua
-- KEYS[1] tokens  KEYS[2] active  KEYS[3] leases  KEYS[4] consumed  KEYS[5] meta  KEYS[6] admits  KEYS[7] seen
-- KEYS[8] entries
-- ARGV[1] delta (ms): every stored timestamp moves back by it (negative: forward).
-- Returns the number of values changed.
local d = tonumber(ARGV[1])
if not d then return redis.error_reply('ERR shift-clock: delta missing') end
local function int(n) return string.format('%.0f', n) end
local changed = 0

local records = redis.call('HGETALL', KEYS[1])
for i = 1, #records, 2 do
  local tokenExp, claimExp, rest, pickupBy, failedAt = string.match(records[i + 1], '^(%d+)|(%d+)|([^|]*|[^|]+)|?(%d*)|?(%d*)$')
  if not tokenExp then return redis.error_reply('ERR shift-clock: unexpected token record') end
  tokenExp, claimExp = tonumber(tokenExp), tonumber(claimExp)
  if tokenExp ~= 0 then tokenExp = tokenExp - d; changed = changed + 1 end
  if claimExp ~= 0 then claimExp = claimExp - d; changed = changed + 1 end
  local suffix = ''
  if pickupBy ~= '' then suffix = '|' .. int(tonumber(pickupBy) - d); changed = changed + 1 end
  if failedAt ~= '' then suffix = suffix .. (pickupBy ~= '' and '|' or '||') .. int(tonumber(failedAt) - d); changed = changed + 1 end
  redis.call('HSET', KEYS[1], records[i], int(tokenExp) .. '|' .. int(claimExp) .. '|' .. rest .. suffix)
end

for _, k in ipairs({ 2, 3, 4, 6 }) do
  local entries = redis.call('ZRANGE', KEYS[k], 0, -1, 'WITHSCORES')
  for i = 1, #entries, 2 do
    redis.call('ZADD', KEYS[k], int(tonumber(entries[i + 1]) - d), entries[i])
    changed = changed + 1
  end
end

local seen = redis.call('HGETALL', KEYS[7])
for i = 1, #seen, 2 do
  redis.call('HSET', KEYS[7], seen[i], int(tonumber(seen[i + 1]) - d))
  changed = changed + 1
end

local points = redis.call('ZRANGE', KEYS[8], 0, -1, 'WITHSCORES')
for i = 1, #points, 2 do
  redis.call('ZREM', KEYS[8], points[i])
  redis.call('ZADD', KEYS[8], points[i + 1], int(tonumber(points[i]) - d))
  changed = changed + 1
end

for _, field in ipairs({ 'bts', 'ws', 'wf', 'wl', 'mv', 'co', 'kt', 'ows', 'ae', 'pz' }) do
  local v = tonumber(redis.call('HGET', KEYS[5], field))
  if v then
    redis.call('HSET', KEYS[5], field, int(v - d))
    changed = changed + 1
  end
end
return changed
`;

/** The keys the shift script takes, in KEYS order. */
export function shiftClockKeys(prefix: string, queue: string): string[] {
  const k = queueKeys(prefix, queue);
  return [k.tokens, k.active, k.leases, k.consumed, k.meta, k.admits, k.seen, k.entries];
}

/**
 * Makes `deltaMs` pass for one queue on Redis, as if the server clock jumped forward
 * by it. Returns how many stored values moved.
 */
export async function shiftQueueClock(client: Redis, prefix: string, queue: string, deltaMs: number): Promise<number> {
  const keys = shiftClockKeys(prefix, queue);
  return Number(await client.eval(SHIFT_CLOCK_LUA, keys.length, ...keys, String(deltaMs)));
}

/** Redis `TIME` in epoch ms, computed as the scripts compute it (lua/includes/now.lua). */
export async function redisNowMs(client: Redis): Promise<number> {
  const [seconds, micros] = await client.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}
