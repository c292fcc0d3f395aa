#!lua flags=no-writes
--[[
  The shape of the line, read-only: lets each app instance estimate ranks for
  polls without a Redis call per poll (see src/position-cache.ts).

  KEYS[1] waiting  zset member -> entry sequence
  KEYS[2] meta     hash: gen, admission window

  ARGV[1] generation the caller knows ('' if none)

  Returns { totalWaiting, headSeq|false, lastSeq|false, nowMs, windowStart,
            windowCurrent, windowPrevious, windowFirst, generation,
            rank, seq, rank, seq, ... }, or { STATE_LOST }.

  After the generation come rank probes, as (rank, seq) pairs by increasing
  rank: seq is the entry sequence of the member at that 0-based rank. Ranks 0,
  then 64, 128, 256, ... (powers of two from 64) while below totalWaiting - 1,
  then totalWaiting - 1; none when nobody waits. Rank 0 and totalWaiting - 1 are
  the head and the last member already read; each other probe is one
  ZRANGE key r r WITHSCORES, O(log N): 11 at 100,000 waiting, 14 at 1,000,000.
  All in this one script, so the probes and the rest are one consistent read.
]]
--- @include "now"
--- @include "generation"
--- @include "admissionWindow"

local gen = checkGeneration(KEYS[2], ARGV[1] or '')
if not gen then return { STATE_LOST } end

local total = redis.call('ZCARD', KEYS[1])
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
local window = redis.call('HMGET', KEYS[2], unpack(WINDOW_FIELDS))
local reply = appendWindow({ total, head[2] or false, last[2] or false, nowMs(), gen }, window, 1)

local n = #reply
local function probe(rank, seq)
  reply[n + 1] = rank
  reply[n + 2] = seq
  n = n + 2
end

if total > 0 and head[2] and last[2] then
  probe(0, head[2])
  local rank = 64
  while rank < total - 1 do
    probe(rank, redis.call('ZRANGE', KEYS[1], rank, rank, 'WITHSCORES')[2])
    rank = rank * 2
  end
  if total > 1 then probe(total - 1, last[2]) end
end
return reply
