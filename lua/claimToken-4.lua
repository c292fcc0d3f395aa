#!lua
--[[
  Claim a member's token for one request: READY -> CLAIMED under a lease, for one
  claim or a batch of them (group commit: the claims of one app instance that reach
  the store in the same turn of its event loop; src/store/group-commit.ts), each
  handled as if alone, in the order sent. Idempotent: re-running with the same claim
  id (or re-sending the batch) returns the same claim.

  KEYS[1] tokens   hash member -> token record
  KEYS[2] active   zset member -> token deadline (ms)
  KEYS[3] leases   zset member -> claim lease expiry (ms)
  KEYS[4] meta     hash: gen

  ARGV[1] generation the caller knows ('' if none)
  Then four values per claim, at most MAX_BATCH (256) claims (ARGV[2..5] for the
  first, ARGV[6..9] for the second, ...):
  ARGV[2] member id   ARGV[3] presented token   ARGV[4] claim id   ARGV[5] lease (ms)

  Returns { STATE_LOST } (for the whole batch), or one reply per claim, in the order
  sent: { 1, leaseExpiresAtMs } claimed, { 2 } invalid, { 3, otherLeaseExpiresAtMs,
  nowMs } in use (the caller answers when to retry), { BAD_ARGUMENTS } (an empty
  member or claim id, or a lease that is not a positive number: nothing written for
  it, the others' results as if it were absent). An error reply when ARGV is not a
  whole number of claims. Per claim: HGET tokens, and when claimed HSET, two ZADD.
]]
--- @include "now"
--- @include "tokenRecord"
--- @include "generation"

local BAD_ARGUMENTS = -5
local MAX_BATCH, PER_CLAIM = 256, 4
local expected = ARGV[1]
local count = (#ARGV - 1) / PER_CLAIM
if not expected or count < 1 or count > MAX_BATCH or count ~= math.floor(count) then
  return redis.error_reply('ERR waitgate: bad claim arguments')
end
local now = nowMs()
if not checkGeneration(KEYS[4], expected) then return { STATE_LOST } end

local function claimOne(member, presented, claimId, lease)
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
end

local replies = {}
for i = 0, count - 1 do
  local at = 2 + i * PER_CLAIM
  local member, presented, claimId, lease = ARGV[at], ARGV[at + 1], ARGV[at + 2], tonumber(ARGV[at + 3])
  if member == '' or claimId == '' or not lease or lease <= 0 then
    replies[#replies + 1] = { BAD_ARGUMENTS }
  else
    replies[#replies + 1] = claimOne(member, presented, claimId, lease)
  end
end
return replies
