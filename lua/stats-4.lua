#!lua flags=no-writes
--[[
  Queue counters, read-only.

  KEYS[1] waiting  zset member -> entry sequence
  KEYS[2] active   zset member -> token deadline (ms)
  KEYS[3] leases   zset member -> claim lease expiry (ms)
  KEYS[4] meta     hash: gen, admission window (lua/includes/admissionWindow.lua)

  ARGV[1] generation the caller knows ('' if none)

  Returns { waiting, active, claimed, nowMs, generation, abandoned (members dropped
            since the queue began), then the six window values }, or { STATE_LOST }.
]]
--- @include "now"
--- @include "generation"
--- @include "admissionWindow"

local gen = checkGeneration(KEYS[4], ARGV[1] or '')
if not gen then return { STATE_LOST } end
local now = nowMs()
local window = redis.call('HMGET', KEYS[4], unpack(WINDOW_FIELDS))
return appendWindow({ redis.call('ZCARD', KEYS[1]),
                      redis.call('ZCOUNT', KEYS[2], '(' .. int(now), '+inf'),
                      redis.call('ZCOUNT', KEYS[3], '(' .. int(now), '+inf'),
                      now, gen, tonumber(redis.call('HGET', KEYS[4], 'ab') or '0') }, window, 1)
