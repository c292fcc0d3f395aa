#!lua flags=no-writes
--[[
  Read one member's position. Changes nothing, so it keeps answering under
  CLIENT PAUSE WRITE and when Redis is out of memory.

  KEYS[1] waiting  zset member -> entry sequence
  KEYS[2] tokens   hash member -> token record
  KEYS[3] meta     hash: gen, seq, bucket, admission window

  ARGV[1] generation the caller knows ('' if none)   ARGV[2] member id

  Returns the positionReply (lua/includes/readPosition.lua), or { STATE_LOST }.
]]
--- @include "now"
--- @include "tokenRecord"
--- @include "generation"
--- @include "admissionWindow"
--- @include "controls"
--- @include "readPosition"

local expected, member = ARGV[1], ARGV[2]
local now = nowMs()
local meta = readMeta(KEYS[3])
local gen = acceptGeneration(meta[1], expected)
if not gen then return { STATE_LOST } end
return readPosition(KEYS[1], member, liveRecord(KEYS[2], member, now), now, meta, gen, expected)
