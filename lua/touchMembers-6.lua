#!lua
--[[
  What an instance answered lately, batched: signs of life of waiting members near
  the head (polls, exact or from its positionCache; only those near the head are
  sent, so the work follows the head of the line, not the crowd), and READY answers,
  which pick up a token nobody had read yet (pickupTimeoutSeconds).

  KEYS[1] waiting  zset member -> entry score
  KEYS[2] tokens   hash member -> token record
  KEYS[3] active   zset member -> token deadline (ms)
  KEYS[4] seen     hash member -> last sign of life (ms)
  KEYS[5] meta     hash: gen
  KEYS[6] lanes    zset member -> lane score (lua/includes/lanes.lua): a member seen who
                   is not in the default lane may wait in a lane (read only then)

  ARGV[1] generation the caller knows ('' if none)
  ARGV[2] k, the number of members seen waiting
  ARGV[3 .. 2 + k] members seen waiting: their last sign of life is now, if they still wait
  ARGV[3 + k ..] members answered READY: their token is picked up, if it still waits for it
  (at most 1,000 ids a call)

  Returns the number of members whose presence or pick-up was recorded, or STATE_LOST.
]]
--- @include "now"
--- @include "tokenRecord"
--- @include "pickUp"
--- @include "generation"

local MAX_MEMBERS = 1000
local expected, k = ARGV[1], tonumber(ARGV[2])
if not expected or not k or k < 0 or 2 + k > #ARGV or #ARGV - 2 > MAX_MEMBERS then
  return redis.error_reply('ERR waitgate: bad touch arguments')
end
local now = nowMs()
if not checkGeneration(KEYS[5], expected) then return STATE_LOST end

local recorded = 0
if k > 0 then
  -- One ZMSCORE and one HSET for all of them: a command per id would cost Redis about
  -- three times as much, and at a million polling this script is most of Redis's work.
  local scores = redis.call('ZMSCORE', KEYS[1], unpack(ARGV, 3, 2 + k))
  local others = {}
  for i = 1, k do if not scores[i] then others[#others + 1] = i end end
  if #others > 0 then
    local ids = {}
    for j, i in ipairs(others) do ids[j] = ARGV[2 + i] end
    local inLanes = redis.call('ZMSCORE', KEYS[6], unpack(ids))
    for j, i in ipairs(others) do scores[i] = inLanes[j] end
  end
  local fields = {}
  for i = 1, k do
    if scores[i] then
      fields[#fields + 1] = ARGV[2 + i]
      fields[#fields + 1] = now
    end
  end
  if #fields > 0 then redis.call('HSET', KEYS[4], unpack(fields)) end
  recorded = #fields / 2
end
for i = 3 + k, #ARGV do
  local record = parseRecord(redis.call('HGET', KEYS[2], ARGV[i]))
  if record and record.pickupBy > 0 and deadlineOf(record) > now then
    pickUp(KEYS[2], KEYS[3], ARGV[i], record)
    recorded = recorded + 1
  end
end
return recorded
