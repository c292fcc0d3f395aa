-- Taking members from the head of the line for an admission step, in place: the
-- members met are admitted, dropped as abandoned, or held (left at the head).
-- Needs the reapTokens (CHUNK) and bucket (refillBucket) includes.
--   abandonAfter (ms; -1: never): a member met whose last sign of life (the `seen`
--     hash) is older, or who has none, is dropped instead of admitted, at no admission
--     cost; at most MAX_DROPS a step, and no more than the drop bucket holds.
--   holdSilent (ms; -1: none): a member silent that long, not yet abandonAfter, is held:
--     neither admitted nor dropped, it keeps its place (its seen entry too); at most
--     MAX_HELD a step, beyond them a silent member is admitted (the line never stalls).
-- The drop bucket (meta dt/dts, refilled as lua/includes/bucket.lua refills the admission
-- bucket: it starts full) holds one second's worth of drops at `dropRate` a second,
-- shared by every instance; a dead member met with it empty stays in place, and the step
-- stops there (FIFO: nobody behind it is admitted first).
-- Bound: a call decides on at most n + MAX_DROPS + MAX_HELD members and reads at most n
-- more (the rest of the batch where it stopped), however long the line.
-- A line is the `waiting` zset (band nil), or one lane of the `lanes` zset: the band of
-- scores [band, band + LANE_SPAN) (lua/includes/lanes.lua), read by score.
local MAX_DROPS = 1000
local MAX_HELD = 256

-- Drops the bucket allows now (MAX_DROPS without a rate), and the bucket to store after.
local function dropBudget(metaKey, now, dropRate)
  if dropRate < 0 then return MAX_DROPS, nil, nil end
  local d = redis.call('HMGET', metaKey, 'dt', 'dts')
  local capacity = math.max(1, dropRate)
  local tokens, refilledAt = refillBucket(d[1], d[2], now, dropRate, capacity)
  return math.min(MAX_DROPS, math.floor(tokens + 1e-9)), tokens, refilledAt
end

-- Returns admitted ids, their entry scores, dropped ids and the number held.
local function takeFromHead(waitingKey, seenKey, now, n, abandonAfter, holdSilent, budget, band)
  local admitted, scores, dropped = {}, {}, {}
  local tracking = abandonAfter >= 0
  local holding = tracking and holdSilent >= 0
  -- The held stay at ranks 0 .. held - 1 (the rest of each batch is removed before the
  -- next is read), so the next batch starts at rank `held`.
  local held, blocked = 0, false
  while #admitted < n and not blocked do
    local batch
    if band then
      batch = redis.call('ZRANGE', waitingKey, band, '(' .. string.format('%.17g', band + LANE_SPAN), 'BYSCORE', 'LIMIT', held, n - #admitted, 'WITHSCORES')
    else
      batch = redis.call('ZRANGE', waitingKey, held, held + n - #admitted - 1, 'WITHSCORES')
    end
    if #batch == 0 then break end
    local ids = {}
    for i = 1, #batch, 2 do ids[#ids + 1] = batch[i] end
    local seenAt = {}
    if tracking then
      for first = 1, #ids, CHUNK do
        local values = redis.call('HMGET', seenKey, unpack(ids, first, math.min(first + CHUNK - 1, #ids)))
        for i = 1, #values do seenAt[first + i - 1] = tonumber(values[i]) end
      end
    end
    local decided = {}
    for i = 1, #ids do
      local at = seenAt[i]
      if tracking and (not at or now - at > abandonAfter) then
        if #dropped >= budget then blocked = true break end -- out of drops: it stays in place
        dropped[#dropped + 1] = ids[i]
        decided[#decided + 1] = ids[i]
      elseif holding and held < MAX_HELD and now - at > holdSilent then
        held = held + 1
      else
        admitted[#admitted + 1] = ids[i]
        scores[#scores + 1] = batch[2 * i]
        decided[#decided + 1] = ids[i]
      end
    end
    for first = 1, #decided, CHUNK do
      local last = math.min(first + CHUNK - 1, #decided)
      redis.call('ZREM', waitingKey, unpack(decided, first, last))
      redis.call('HDEL', seenKey, unpack(decided, first, last))
    end
  end
  return admitted, scores, dropped, held
end
