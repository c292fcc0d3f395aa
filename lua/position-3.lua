#!lua flags=no-writes
--[[
  Read one member's position. Changes nothing, so it keeps answering under
  CLIENT PAUSE WRITE and when Redis is out of memory.

  KEYS[1] waiting  zset member -> entry sequence
  KEYS[2] tokens   hash member -> token record
  KEYS[3] meta     hash: seq, bucket, admission window

  ARGV[1] member id

  Returns the readPosition reply.
]]
--- @include "now"
--- @include "tokenRecord"
--- @include "readPosition"

return readPosition(KEYS[1], KEYS[2], KEYS[3], ARGV[1], nowMs())
