#!lua flags=allow-oom
--[[
  Runs even when Redis is out of memory (allow-oom): it frees more than it adds,
  and a committed order must be able to settle.

  Give a claimed token back after the order rolled back: CLAIMED -> READY, so
  the member can retry with the same token until it expires. Safe to repeat.

  KEYS[1] tokens   hash member -> token record
  KEYS[2] active   zset member -> token deadline (ms)
  KEYS[3] leases   zset member -> claim lease expiry (ms)
  KEYS[4] meta     hash: gen, the order window (lua/includes/orderHealth.lua)

  ARGV[1] generation the caller knows ('' if none)   ARGV[2] member id   ARGV[3] claim id
  ARGV[4] the claim's lease (ms; '' if unknown), to measure the order's latency (claim to now)
  ARGV[5] '0' the order path did not fail (a 4xx answer: validation, out of stock, payment
          declined): nothing is recorded for adaptive admission; '1' or absent: it failed (a
          thrown handler, a 5xx, a dropped connection), recorded as a failed order with its
          latency, but at most once per token per order window: the token record keeps when
          it last counted (failedAt), so claiming and failing one token again and again
          counts once every ORDER_WINDOW_MS (O(1), nothing kept beside the token)

  Returns 1 released, 0 this claim no longer held the token, STATE_LOST.
]]
--- @include "now"
--- @include "tokenRecord"
--- @include "generation"
--- @include "orderHealth"

local expected, member, claimId, lease = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4] or '')
local failedArg = ARGV[5] or ''
if not (expected and member and claimId and claimId ~= '') or not (failedArg == '' or failedArg == '0' or failedArg == '1') then
  return redis.error_reply('ERR waitgate: bad release arguments')
end
local now = nowMs()
if not checkGeneration(KEYS[4], expected) then return STATE_LOST end

local record = parseRecord(redis.call('HGET', KEYS[1], member))
if not record or record.claimId ~= claimId or deadlineOf(record) <= now then return 0 end

-- Its lease gone from leases: it lapsed and an admission step counted it as a failed order already.
local leased = redis.call('ZREM', KEYS[3], member) == 1
-- A clock that went back (failover) counts again rather than never.
local counts = failedArg ~= '0' and (now - record.failedAt >= ORDER_WINDOW_MS or now < record.failedAt)
if leased and counts then
  record.failedAt = now
  if lease then
    recordOrders(KEYS[4], now, 1, 1, math.max(0, now - (record.claimExp - lease)), 1)
  else
    recordOrders(KEYS[4], now, 1, 1, 0, 0)
  end
end
record.claimId, record.claimExp = '', 0
redis.call('HSET', KEYS[1], member, formatRecord(record))
redis.call('ZADD', KEYS[2], record.tokenExp, member)
return 1
