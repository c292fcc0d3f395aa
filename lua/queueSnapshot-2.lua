#!lua flags=no-writes
--[[
  The shape of the line, read-only: lets each app instance estimate ranks for
  polls without a Redis call per poll (see src/position-cache.ts).

  KEYS[1] waiting  zset member -> entry sequence
  KEYS[2] meta     hash: gen, admission window

  ARGV[1] generation the caller knows ('' if none)

  Returns { totalWaiting, headSeq|false, lastSeq|false, nowMs, windowStart,
            windowCurrent, windowPrevious, windowFirst, generation }, or { STATE_LOST }.
]]
--- @include "now"
--- @include "generation"

local gen = checkGeneration(KEYS[2], ARGV[1] or '')
if not gen then return { STATE_LOST } end

local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
local window = redis.call('HMGET', KEYS[2], 'ws', 'wc', 'wp', 'wf')
return { redis.call('ZCARD', KEYS[1]), head[2] or false, last[2] or false, nowMs(),
         window[1], window[2], window[3], window[4], gen }
