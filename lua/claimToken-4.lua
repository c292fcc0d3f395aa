#!lua
--[[
  Claim a member's token for one request: READY -> CLAIMED under a lease.
  Idempotent: re-running with the same claim id returns the same claim.

  KEYS[1] tokens   hash member -> token record
  KEYS[2] active   zset member -> token deadline (ms)
  KEYS[3] leases   zset member -> claim lease expiry (ms)
  KEYS[4] meta     hash: gen

  ARGV[1] generation the caller knows ('' if none)   ARGV[2] member id
  ARGV[3] presented token   ARGV[4] claim id   ARGV[5] lease (ms)

  Returns { 1, leaseExpiresAtMs } claimed, { 2 } invalid, { 3, otherLeaseExpiresAtMs,
  nowMs } in use (the caller answers when to retry), { STATE_LOST }.
]]
--- @include "now"
--- @include "tokenRecord"
--- @include "generation"

local expected, member, presented, claimId, lease = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
if not (expected and member and presented and claimId and claimId ~= '' and lease and lease > 0) then
  return redis.error_reply('ERR waitgate: bad claim arguments')
end
local now = nowMs()
if not checkGeneration(KEYS[4], expected) then return { STATE_LOST } end

local record = parseRecord(redis.call('HGET', KEYS[1], member))
if not record or deadlineOf(record) <= now then return { 2 } end
-- Compare digests, not the strings: the time taken says nothing about the stored token.
if redis.sha1hex(presented) ~= redis.sha1hex(record.token) then return { 2 } end

if record.claimId == claimId then return { 1, int(record.claimExp) } end
if record.claimId ~= '' and record.claimExp > now then return { 3, int(record.claimExp), now } end

record.claimId, record.claimExp = claimId, now + lease
record.pickupBy = 0 -- a claim picks the token up
redis.call('HSET', KEYS[1], member, formatRecord(record))
redis.call('ZADD', KEYS[2], deadlineOf(record), member)
redis.call('ZADD', KEYS[3], record.claimExp, member)
return { 1, int(record.claimExp) }
