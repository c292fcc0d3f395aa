#!lua flags=no-writes
--[[
  Read the position of one member or of a batch of them (group commit: the exact
  look-ups of one app instance that reach the store in the same turn of its event
  loop; src/store/group-commit.ts). Changes nothing, so it keeps answering under
  CLIENT PAUSE WRITE and when Redis is out of memory.

  KEYS[1] waiting  zset member -> entry sequence
  KEYS[2] tokens   hash member -> token record
  KEYS[3] meta     hash: gen, seq, bucket, admission window, ln (the lanes)
  KEYS[4] lanes    zset member -> lane score (lua/includes/lanes.lua), read only while
                   meta ln is set: a lane member's rank counts its own lane

  ARGV[1] generation the caller knows ('' if none)
  ARGV[2..] member ids, one per look-up, at most MAX_BATCH (256)

  Returns { STATE_LOST } (for the whole batch), or { shared, reply1, reply2, ... }:
  shared is what every member's answer has in common, sent once (sharedReply in
  lua/includes/readPosition.lua: now, generation, window, controls), then one compact
  positionReply per member id, in the order sent. Per call: TIME and HMGET meta once;
  per member HGET tokens, ZCARD, ZSCORE, ZRANK (with lanes stored, a member not in the
  default lane: ZSCORE and ZCOUNT lanes instead of ZRANK; ZCARD lanes once).
]]
--- @include "now"
--- @include "tokenRecord"
--- @include "generation"
--- @include "admissionWindow"
--- @include "controls"
--- @include "readPosition"

local MAX_BATCH = 256
local expected = ARGV[1]
if not expected or #ARGV < 2 or #ARGV > MAX_BATCH + 1 then return redis.error_reply('ERR waitgate: bad position arguments') end
local now = nowMs()
local meta = readMeta(KEYS[3])
local gen = acceptGeneration(meta[1], expected)
if not gen then return { STATE_LOST } end
compactReplies = true
local replies = { sharedReply(now, meta, gen, expected, KEYS[4]) }
for i = 2, #ARGV do
  local member = ARGV[i]
  replies[i] = readPosition(KEYS[1], member, liveRecord(KEYS[2], member, now), now, meta, gen, expected, KEYS[4])
end
return replies
