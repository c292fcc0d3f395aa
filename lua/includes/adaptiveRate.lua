-- Adaptive admission (the `admission: adaptive` option): the law that sets the rate in
-- force from the health of the order path (lua/includes/orderHealth.lua), and its
-- evaluation, at most once a second by any instance, kept in meta:
--   ar the rate in force   ae when it was last evaluated (ms)
-- src/admission-control.ts nextRate is the same law for MemoryStore; the differential
-- test test/store/redis-rules.test.ts checks that both give the same rate over many inputs.
-- Needs the orderHealth include.
local FAILURE_SHARE, DECREASE_ON_FAILURE, MIN_DECREASE, MAX_DECREASE, INCREASE_STEPS = 0.1, 0.8, 0.5, 0.9, 25
local EVALUATE_EVERY_MS = 1000

-- The next rate in force from the current one and the orders settled lately: failures
-- above FAILURE_SHARE multiply it by DECREASE_ON_FAILURE; else orders slower than the
-- target on average by target / latency within [MIN_DECREASE, MAX_DECREASE]; else healthy
-- orders add max / INCREASE_STEPS; no orders: it holds. Always within [min, max].
local function nextRate(inForce, count, failed, latency, samples, target, minRate, maxRate)
  if count > 0 and failed / count > FAILURE_SHARE then
    inForce = inForce * DECREASE_ON_FAILURE
  elseif samples > 0 and latency / samples > target then
    inForce = inForce * math.max(MIN_DECREASE, math.min(MAX_DECREASE, target / (latency / samples)))
  elseif count > 0 then
    inForce = inForce + maxRate / INCREASE_STEPS
  end
  return math.min(maxRate, math.max(minRate, inForce))
end

-- The adaptive rate in force now (the caller's rate clamped to the bounds before any
-- evaluation), evaluated again and stored when a second has passed since the last time.
local function adaptiveRate(metaKey, now, startRate, target, minRate, maxRate)
  local v = redis.call('HMGET', metaKey, 'ar', 'ae', unpack(ORDER_FIELDS))
  local inForce, evaluatedAt = tonumber(v[1]), tonumber(v[2])
  if not inForce then inForce = math.min(maxRate, math.max(minRate, startRate)) end
  if not evaluatedAt or now - evaluatedAt >= EVALUATE_EVERY_MS or now < evaluatedAt then
    local orderValues = {}
    for i = 1, #ORDER_FIELDS do orderValues[i] = v[2 + i] end
    local _, cur, prev = orderWindow(orderValues, now)
    inForce = nextRate(inForce, cur[1] + prev[1], cur[2] + prev[2], cur[3] + prev[3], cur[4] + prev[4], target, minRate, maxRate)
    redis.call('HSET', metaKey, 'ar', string.format('%.17g', inForce), 'ae', int(now))
  end
  return inForce
end
