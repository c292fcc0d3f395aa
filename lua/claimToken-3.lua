#!lua
--[[
  Claim a member's token for one request: READY -> CLAIMED under a lease.
  Idempotent: re-running with the same claim id returns the same claim.

  KEYS[1] tokens   hash member -> token record
  KEYS[2] active   zset member -> token deadline (ms)
  KEYS[3] leases   zset member -> claim lease expiry (ms)

  ARGV[1] member id   ARGV[2] presented token   ARGV[3] claim id   ARGV[4] lease (ms)

  Returns { 1, leaseExpiresAtMs } claimed, { 2 } invalid, { 3 } in use.
]]
--- @include "now"
--- @include "tokenRecord"

local member, presented, claimId, lease = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
if not (member and presented and claimId and claimId ~= '' and lease and lease > 0) then
  return redis.error_reply('ERR waitgate: bad claim arguments')
end
local now = nowMs()

local record = parseRecord(redis.call('HGET', KEYS[1], member))
if not record or deadlineOf(record) <= now then return { 2 } end
-- Compare digests, not the strings: the time taken says nothing about the stored token.
if redis.sha1hex(presented) ~= redis.sha1hex(record.token) then return { 2 } end

if record.claimId == claimId then return { 1, int(record.claimExp) } end
if record.claimId ~= '' and record.claimExp > now then return { 3 } end

record.claimId, record.claimExp = claimId, now + lease
redis.call('HSET', KEYS[1], member, formatRecord(record))
redis.call('ZADD', KEYS[2], deadlineOf(record), member)
redis.call('ZADD', KEYS[3], record.claimExp, member)
return { 1, int(record.claimExp) }
