#!lua
--[[
  Give a claimed token back after the order rolled back: CLAIMED -> READY, so
  the member can retry with the same token until it expires. Safe to repeat.

  KEYS[1] tokens   hash member -> token record
  KEYS[2] active   zset member -> token deadline (ms)
  KEYS[3] leases   zset member -> claim lease expiry (ms)

  ARGV[1] member id   ARGV[2] claim id

  Returns 1 released, 0 this claim no longer held the token.
]]
--- @include "now"
--- @include "tokenRecord"

local member, claimId = ARGV[1], ARGV[2]
if not (member and claimId and claimId ~= '') then
  return redis.error_reply('ERR waitgate: bad release arguments')
end
local now = nowMs()

local record = parseRecord(redis.call('HGET', KEYS[1], member))
if not record or record.claimId ~= claimId or deadlineOf(record) <= now then return 0 end

record.claimId, record.claimExp = '', 0
redis.call('HSET', KEYS[1], member, formatRecord(record))
redis.call('ZADD', KEYS[2], record.tokenExp, member)
redis.call('ZREM', KEYS[3], member)
return 1
