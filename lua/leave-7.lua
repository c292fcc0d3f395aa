#!lua flags=allow-oom
--[[
  Runs even when Redis is out of memory (allow-oom): it frees more than it adds,
  and a committed order must be able to settle.

  Remove a member: out of the queue, or its token dropped (an in-flight claim
  then fails to consume). Safe to repeat.

  KEYS[1] waiting  zset member -> entry sequence
  KEYS[2] tokens   hash member -> token record
  KEYS[3] active   zset member -> token deadline (ms)
  KEYS[4] leases   zset member -> claim lease expiry (ms)
  KEYS[5] meta     hash: gen
  KEYS[6] seen     hash member -> last sign of life (ms)
  KEYS[7] lanes    zset member -> lane score (lua/includes/lanes.lua)

  ARGV[1] generation the caller knows ('' if none)   ARGV[2] member id

  Returns 1 if the member was waiting or held a live token, else 0; STATE_LOST.
]]
--- @include "now"
--- @include "tokenRecord"
--- @include "dropToken"
--- @include "generation"

local expected, member = ARGV[1], ARGV[2]
if not expected or not member or member == '' then return redis.error_reply('ERR waitgate: bad leave arguments') end
local now = nowMs()
if not checkGeneration(KEYS[5], expected) then return STATE_LOST end

local wasWaiting = redis.call('ZREM', KEYS[1], member) + redis.call('ZREM', KEYS[7], member)
redis.call('HDEL', KEYS[6], member)
local record = parseRecord(redis.call('HGET', KEYS[2], member))
local hadToken = record and deadlineOf(record) > now
if record then dropToken(KEYS[2], KEYS[3], KEYS[4], member) end
if wasWaiting > 0 or hadToken then return 1 end
return 0
