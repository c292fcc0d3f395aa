-- Safety net (setControls safetyNet, meta cn '1' or '0'; the caller's option while never
-- set): while nobody is waiting, the bucket has a token, maxActive has room and the stock
-- allows, an enter admits at once, in the same call. The line forms only when arrivals
-- exceed the rate or the cap; FIFO holds, since nobody is let in while anyone waits.
-- src/store/memory/safety-net.ts is the same rule for MemoryStore.
-- Needs the ratesInForce, bucket, tokenRecord and recordFigures includes.

-- ARGV[2] of an enter: 'head', or 'head|option|rate|burst|maxActive' from a caller whose
-- members send fresh tokens for the net: its safetyNet option (1 or 0), its rate, burst
-- (-1: follows the rate) and maxActive (-1: no cap), used where the controls set none.
-- Returns the head part and the net (nil without one, false when malformed).
local function netArgument(arg)
  if not arg then return nil, nil end
  local bar = string.find(arg, '|', 1, true)
  if not bar then return arg, nil end
  local option, rate, burst, cap = string.match(string.sub(arg, bar + 1), '^([01])|([^|]+)|([^|]+)|([^|]+)$')
  local net = option and { option = option == '1', rate = tonumber(rate), burst = tonumber(burst), maxActive = tonumber(cap) }
  if not (net and net.rate and net.rate > 0 and net.burst and net.maxActive) then return nil, nil end
  return string.sub(arg, 1, bar - 1), net
end

-- The net is on: the control cn when set, else the caller's option.
local function netOn(net, cn)
  if not net then return false end
  if cn then return cn == '1' end
  return net.option
end

-- Takes one token of the bucket for a member entering while nobody waits, given meta's
-- cr, ar, sk (the controls' rate, adaptive admission's, the stock left), when the rate,
-- maxActive and stock allow; writes the bucket (and sa, the stock left minus the tokens
-- in play). True when the member may be let in. O(log N): one HMGET, one ZCOUNT.
local function netTakes(metaKey, activeKey, now, net, cr, ar, sk)
  local m = redis.call('HMGET', metaKey, 'bt', 'bts', 'cb', 'ca')
  local rate = tonumber(cr) or tonumber(ar) or net.rate
  local burst = tonumber(m[3]) or (net.burst == -1 and defaultBurst(rate) or net.burst)
  local maxActive = tonumber(m[4]) or net.maxActive
  local tokens, refilledAt = refillBucket(m[1], m[2], now, rate, burst)
  if tokens + 1e-9 < 1 then return false end
  local inPlay = redis.call('ZCOUNT', activeKey, '(' .. now, '+inf')
  if maxActive >= 0 and inPlay >= maxActive then return false end
  local stockLeft = tonumber(sk)
  if stockLeft and stockLeft - inPlay <= 0 then return false end
  local fields = bucketFields({}, tokens - 1, refilledAt)
  if stockLeft then
    fields[#fields + 1] = 'sa'
    fields[#fields + 1] = string.format('%d', math.max(0, stockLeft - inPlay - 1))
  end
  redis.call('HSET', metaKey, unpack(fields))
  return true
end

-- A token issued at once (passthrough, or the safety net): as an admission step would
-- issue it, already picked up (its holder reads READY in this reply). Returns the record.
local function issueAtOnce(tokensKey, activeKey, metaKey, member, token, ttl, now)
  local issued = { tokenExp = now + ttl, claimExp = 0, claimId = '', token = token, pickupBy = 0 }
  redis.call('HSET', tokensKey, member, formatRecord(issued))
  redis.call('ZADD', activeKey, issued.tokenExp, member)
  redis.call('HINCRBY', metaKey, 'te', 1)
  redis.call('HINCRBY', metaKey, 'ta', 1)
  recordWaits(metaKey, now, { 0 })
  return issued
end
