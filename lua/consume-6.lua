#!lua flags=allow-oom
--[[
  Runs even when Redis is out of memory (allow-oom): it frees more than it adds,
  and a committed order must be able to settle.

  Use a claimed token for good, after the order committed. The claim id fences
  it: a claim that lapsed and was taken over by another cannot consume.
  Idempotent: a consumed claim id is remembered, so a repeat answers 1 again.

  KEYS[1] tokens    hash member -> token record
  KEYS[2] active    zset member -> token deadline (ms)
  KEYS[3] leases    zset member -> claim lease expiry (ms)
  KEYS[4] consumed  zset claim id -> forget-after (ms)
  KEYS[5] meta      hash: gen, tc (tokens consumed since the queue began), the order window,
                    the stock (lua/includes/stock.lua): one unit less; the last closes the queue
  KEYS[6] log       list: the audit trail (lua/includes/controlsLog.lua), where closing sold
                    out is recorded with the actor STOCK_ACTOR

  ARGV[1] generation the caller knows ('' if none)   ARGV[2] member id
  ARGV[3] claim id   ARGV[4] how long to remember the consume (ms)
  ARGV[5] the claim's lease (ms; '' if unknown): the order's latency, from claim to
          now, is recorded for adaptive admission (lua/includes/orderHealth.lua)

  Returns 1 consumed (now or before), 0 taken over by another claim or expired,
  STATE_LOST.
]]
--- @include "now"
--- @include "tokenRecord"
--- @include "dropToken"
--- @include "generation"
--- @include "orderHealth"
--- @include "stock"
--- @include "controlsLog"

local expected, member, claimId, remember, lease = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5] or '')
if not (expected and member and claimId and claimId ~= '' and remember and remember > 0) then
  return redis.error_reply('ERR waitgate: bad consume arguments')
end
local now = nowMs()
if not checkGeneration(KEYS[5], expected) then return STATE_LOST end

local forgetAt = tonumber(redis.call('ZSCORE', KEYS[4], claimId))
if forgetAt and forgetAt > now then return 1 end
local record = parseRecord(redis.call('HGET', KEYS[1], member))
if not record or record.claimId ~= claimId or deadlineOf(record) <= now then return 0 end

-- Its lease gone from leases: it lapsed and an admission step counted it as a failed order already.
local leased = dropToken(KEYS[1], KEYS[2], KEYS[3], member)
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
redis.call('ZADD', KEYS[4], now + remember, claimId)
redis.call('HINCRBY', KEYS[5], 'tc', 1) -- the consumed total (lua/includes/queueFigures.lua)
local sold = sellOne(unpack(redis.call('HMGET', KEYS[5], 'sk', 'sm', 'cv')))
if #sold > 0 then
  redis.call('HSET', KEYS[5], unpack(sold))
  -- The last unit: the queue closed itself (the fields after sk: cm, cx, cv).
  if #sold > 2 then logChange(KEYS[6], now, STOCK_ACTOR, cjson.encode({ mode = sold[4], message = sold[6] }), tonumber(sold[8])) end
end
if leased and lease and record.claimExp > 0 then
  recordOrders(KEYS[5], now, 1, 0, math.max(0, now - (record.claimExp - lease)), 1)
elseif leased then
  recordOrders(KEYS[5], now, 1, 0, 0, 0)
end
return 1
