-- The health of the order path (the `admission: adaptive` option), kept in meta and
-- shared by every instance: orders settled in two fixed windows of ORDER_WINDOW_MS,
-- read as one (the current window and the one before it):
--   ows start of the current window (ms)
--   owc orders settled in it (consumed, released, or their lease lapsed)
--   owf of those, failed (released, or the lease lapsed)
--   owl latency sum (ms, claim to consume or release)   own latencies summed
--   opc opf opl opn the same for the window before
-- And the rate it sets: ar the admission rate in force, ae when it was last evaluated.
-- src/admission-control.ts keeps the same for MemoryStore.
local ORDER_WINDOW_MS = 2000
local ORDER_FIELDS = { 'ows', 'owc', 'owf', 'owl', 'own', 'opc', 'opf', 'opl', 'opn' }

-- The window as of now, from the nine values as HMGET read them: start, current
-- { count, failed, latency, samples } and previous, rotated as time passed.
local function orderWindow(v, now)
  local start = tonumber(v[1]) or now
  local cur = { tonumber(v[2]) or 0, tonumber(v[3]) or 0, tonumber(v[4]) or 0, tonumber(v[5]) or 0 }
  local prev = { tonumber(v[6]) or 0, tonumber(v[7]) or 0, tonumber(v[8]) or 0, tonumber(v[9]) or 0 }
  if now - start >= 2 * ORDER_WINDOW_MS then
    return now, { 0, 0, 0, 0 }, { 0, 0, 0, 0 }
  elseif now - start >= ORDER_WINDOW_MS then
    return start + ORDER_WINDOW_MS, { 0, 0, 0, 0 }, cur
  end
  return start, cur, prev
end

-- Records settled orders: `count` of them, `failed` of those, and `samples` latencies
-- summing to `latency` ms.
local function recordOrders(metaKey, now, count, failed, latency, samples)
  local start, cur, prev = orderWindow(redis.call('HMGET', metaKey, unpack(ORDER_FIELDS)), now)
  cur = { cur[1] + count, cur[2] + failed, cur[3] + latency, cur[4] + samples }
  redis.call('HSET', metaKey, 'ows', int(start), 'owc', cur[1], 'owf', cur[2], 'owl', int(cur[3]), 'own', cur[4],
             'opc', prev[1], 'opf', prev[2], 'opl', int(prev[3]), 'opn', prev[4])
end
