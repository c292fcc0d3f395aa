#!lua
--[[
  Remove a member: out of the queue, or its token dropped (an in-flight claim
  then fails to consume). Safe to repeat.

  KEYS[1] waiting  zset member -> entry sequence
  KEYS[2] tokens   hash member -> token record
  KEYS[3] active   zset member -> token deadline (ms)
  KEYS[4] leases   zset member -> claim lease expiry (ms)

  ARGV[1] member id

  Returns 1 if the member was waiting or held a live token, else 0.
]]
--- @include "now"
--- @include "tokenRecord"

local member = ARGV[1]
if not member or member == '' then return redis.error_reply('ERR waitgate: member id missing') end
local now = nowMs()

local wasWaiting = redis.call('ZREM', KEYS[1], member)
local record = parseRecord(redis.call('HGET', KEYS[2], member))
local hadToken = record and deadlineOf(record) > now
if record then
  redis.call('HDEL', KEYS[2], member)
  redis.call('ZREM', KEYS[3], member)
  redis.call('ZREM', KEYS[4], member)
end
if wasWaiting == 1 or hadToken then return 1 end
return 0
