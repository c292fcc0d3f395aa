#!lua flags=no-writes
--[[
  One member's state, for an operator (WaitingQueue.inspect, the waitgate command):
  never its token, and nothing written: it is not a sign of life, and it picks no
  token up.

  KEYS[1] waiting  zset member -> entry sequence
  KEYS[2] tokens   hash member -> token record
  KEYS[3] seen     hash member -> last sign of life (ms), near the head only
  KEYS[4] meta     hash: gen
  KEYS[5] lanes    zset member -> lane score (lua/includes/lanes.lua): a member not in the
                   default lane may wait in a lane (its rank then counts its own lane)

  ARGV[1] generation the caller knows ('' if none)   ARGV[2] member id

  Returns { status (0 NOT_ENTERED | 1 WAITING | 2 READY | 3 CLAIMED), rank|false,
            total waiting, token expiry|false (ms), lease expiry|false,
            pick-up deadline|false, last seen|false, nowMs, generation }; total waiting
  counts every lane,
  or { STATE_LOST }.
]]
--- @include "now"
--- @include "tokenRecord"
--- @include "generation"
--- @include "lanes"

local member = ARGV[2]
if not member or member == '' then return redis.error_reply('ERR waitgate: bad inspect arguments') end
local gen = checkGeneration(KEYS[4], ARGV[1] or '')
if not gen then return { STATE_LOST } end
local now = nowMs()
local total = redis.call('ZCARD', KEYS[1]) + redis.call('ZCARD', KEYS[5])
local record = parseRecord(redis.call('HGET', KEYS[2], member))
if record and deadlineOf(record) > now then
  local claimed = record.claimId ~= '' and record.claimExp > now
  local pickupBy = false
  if record.pickupBy > 0 then pickupBy = int(record.pickupBy) end
  return { claimed and 3 or 2, false, total, int(record.tokenExp), claimed and int(record.claimExp) or false,
           pickupBy, false, now, gen }
end
local rank = redis.call('ZRANK', KEYS[1], member)
if not rank then
  local score = redis.call('ZSCORE', KEYS[5], member)
  if score then rank = laneRank(KEYS[5], score) end
end
if not rank then return { 0, false, total, false, false, false, false, now, gen } end
return { 1, rank, total, false, false, false, redis.call('HGET', KEYS[3], member) or false, now, gen }
