#!lua
--[[
  Signs of life, batched: the members an instance answered lately (polls, exact or
  from its positionCache). A member still waiting has its last-seen time set (only
  members near the head are sent: the work follows the head of the line, not the
  crowd); a member holding a token nobody had read yet has it picked up
  (pickupTimeoutSeconds: it answered READY).

  KEYS[1] waiting  zset member -> entry score
  KEYS[2] tokens   hash member -> token record
  KEYS[3] active   zset member -> token deadline (ms)
  KEYS[4] seen     hash member -> last sign of life (ms)
  KEYS[5] meta     hash: gen

  ARGV[1] generation the caller knows ('' if none)
  ARGV[2..] member ids (at most 1,000 a call)

  Returns the number of members whose presence or pick-up was recorded, or STATE_LOST.
]]
--- @include "now"
--- @include "tokenRecord"
--- @include "pickUp"
--- @include "generation"

local MAX_MEMBERS = 1000
local expected = ARGV[1]
if not expected or #ARGV - 1 > MAX_MEMBERS then return redis.error_reply('ERR waitgate: bad touch arguments') end
local now = nowMs()
if not checkGeneration(KEYS[5], expected) then return STATE_LOST end

local recorded = 0
for i = 2, #ARGV do
  local member = ARGV[i]
  if redis.call('ZSCORE', KEYS[1], member) then
    redis.call('HSET', KEYS[4], member, now)
    recorded = recorded + 1
  else
    local record = parseRecord(redis.call('HGET', KEYS[2], member))
    if record and record.pickupBy > 0 and deadlineOf(record) > now then
      pickUp(KEYS[2], KEYS[3], member, record)
      recorded = recorded + 1
    end
  end
end
return recorded
