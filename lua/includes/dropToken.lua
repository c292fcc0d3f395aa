-- Drop a member's token record: from the tokens hash, the deadlines and the leases.
-- Returns true when a lease was still held (a consume tells a lapsed lease from it).
local function dropToken(tokensKey, activeKey, leasesKey, member)
  redis.call('HDEL', tokensKey, member)
  redis.call('ZREM', activeKey, member)
  return redis.call('ZREM', leasesKey, member) == 1
end
