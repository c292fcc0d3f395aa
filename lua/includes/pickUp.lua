-- The token was read (a position, enter or token call answering READY, or a claim):
-- it no longer has a pick-up deadline. Rewrites it when it had one.
local function pickUp(tokensKey, activeKey, member, r)
  if r.pickupBy == 0 then return end
  r.pickupBy = 0
  redis.call('HSET', tokensKey, member, formatRecord(r))
  redis.call('ZADD', activeKey, deadlineOf(r), member)
end
