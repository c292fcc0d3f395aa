#!lua flags=no-writes
--[[
  When a member's pass was last revoked (a session guard's checkRevoked): one read.

  KEYS[1] revoked  zset member -> revoked at (ms)
  KEYS[2] meta     hash: gen

  ARGV[1] generation the caller knows ('' if none)   ARGV[2] member id

  Returns the moment (ms, Redis TIME) as a string, or false when never revoked (or
  forgotten); STATE_LOST.
]]
--- @include "generation"

local member = ARGV[2]
if not member or member == '' then return redis.error_reply('ERR waitgate: bad revokedAt arguments') end
if not checkGeneration(KEYS[2], ARGV[1] or '') then return STATE_LOST end
return redis.call('ZSCORE', KEYS[1], member)
