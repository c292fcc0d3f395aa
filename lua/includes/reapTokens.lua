-- Reaping before an admission step counts: tokens whose deadline passed are dropped
-- (counted in meta tx), and each lapsed claim lease is an order that neither committed
-- nor rolled back in time: a failed order for adaptive admission (orderHealth.lua).
-- Needs the now and orderHealth includes.
-- Commands take many members at once, in chunks: unpack() gives at most ~8,000 values
-- (Lua's C stack limit, LUAI_MAXCSTACK), and a reap can concern 10,000s.
local CHUNK = 500

-- Reaps; returns the number of tokens still live.
local function reapTokens(tokensKey, activeKey, leasesKey, metaKey, now)
  local expired = redis.call('ZRANGEBYSCORE', activeKey, '-inf', now)
  if #expired > 0 then
    for first = 1, #expired, CHUNK do
      redis.call('HDEL', tokensKey, unpack(expired, first, math.min(first + CHUNK - 1, #expired)))
    end
    -- Nothing expired means nothing to remove: the same range, read in the same script.
    redis.call('ZREMRANGEBYSCORE', activeKey, '-inf', now)
    redis.call('HINCRBY', metaKey, 'tx', #expired)
  end
  local lapsed = redis.call('ZREMRANGEBYSCORE', leasesKey, '-inf', now)
  if lapsed > 0 then recordOrders(metaKey, now, lapsed, lapsed, 0, 0) end
  return redis.call('ZCARD', activeKey)
end
