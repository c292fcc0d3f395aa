#!lua
--[[
  Join the queue unless the member is already waiting or holds a live token.
  Idempotent: a repeated call keeps the first sequence number, so the rank stays.

  KEYS[1] waiting  zset member -> entry sequence
  KEYS[2] tokens   hash member -> token record
  KEYS[3] active   zset member -> token deadline (ms)
  KEYS[4] leases   zset member -> claim lease expiry (ms)
  KEYS[5] meta     hash: seq, bucket, admission window

  ARGV[1] member id (validated by the caller)

  Returns the readPosition reply after the call.
]]
--- @include "now"
--- @include "tokenRecord"
--- @include "readPosition"

local member = ARGV[1]
if not member or member == '' then return redis.error_reply('ERR waitgate: member id missing') end
local now = nowMs()

local record = parseRecord(redis.call('HGET', KEYS[2], member))
if record and deadlineOf(record) <= now then
  -- The token expired unused: drop it here so the member can join at the back.
  redis.call('HDEL', KEYS[2], member)
  redis.call('ZREM', KEYS[3], member)
  redis.call('ZREM', KEYS[4], member)
  record = nil
end

if not record and not redis.call('ZSCORE', KEYS[1], member) then
  local seq = redis.call('HINCRBY', KEYS[5], 'seq', 1)
  redis.call('ZADD', KEYS[1], seq, member)
end

return readPosition(KEYS[1], KEYS[2], KEYS[5], member, now)
