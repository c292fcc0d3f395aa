#!lua flags=allow-oom
--[[
  Runs even when Redis is out of memory (allow-oom): ending a pass must work when
  nothing else does, and it frees the token it drops.

  End a member's signed pass at once (WaitingQueue.revoke): its token is dropped (an
  in-flight claim then fails to consume) and the moment is recorded, so that session
  guards with checkRevoked refuse every pass issued before it. Revocations older than
  retainMs are forgotten here, each once (no pass that old is still admitted). Safe to
  repeat (a repeat records a later moment: passes issued before it are refused alike).

  KEYS[1] tokens   hash member -> token record
  KEYS[2] active   zset member -> token deadline (ms)
  KEYS[3] leases   zset member -> claim lease expiry (ms)
  KEYS[4] meta     hash: gen
  KEYS[5] revoked  zset member -> revoked at (ms)

  ARGV[1] generation the caller knows ('' if none)   ARGV[2] member id
  ARGV[3] retainMs: how long a revocation is kept

  Returns 1 if the member held a live token, else 0; STATE_LOST.
]]
--- @include "now"
--- @include "tokenRecord"
--- @include "dropToken"
--- @include "generation"

local expected, member, retainMs = ARGV[1], ARGV[2], tonumber(ARGV[3])
if not expected or not member or member == '' or not retainMs or retainMs < 0 then
  return redis.error_reply('ERR waitgate: bad revoke arguments')
end
local now = nowMs()
if not checkGeneration(KEYS[4], expected) then return STATE_LOST end

local record = parseRecord(redis.call('HGET', KEYS[1], member))
local hadToken = record and deadlineOf(record) > now
if record then dropToken(KEYS[1], KEYS[2], KEYS[3], member) end
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', '(' .. int(now - retainMs))
redis.call('ZADD', KEYS[5], int(now), member)
if hadToken then return 1 end
return 0
