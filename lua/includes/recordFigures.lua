-- Keeping the queue-wide figures of queueFigures.lua (include it first): the totals'
-- callers HINCRBY them; here, the wait histogram and the entry checkpoints.
local FIRST_EDGE_MS, BINS_PER_DOUBLING, LAST_WAIT_BIN = 10, 4, 100
local CHECKPOINT_MS = 1000

local function waitEdge(bin)
  return math.floor(FIRST_EDGE_MS * 2 ^ ((bin - 1) / BINS_PER_DOUBLING))
end

local function waitBin(ms)
  if ms < FIRST_EDGE_MS then return 0 end
  local bin = math.min(LAST_WAIT_BIN, math.floor(BINS_PER_DOUBLING * math.log(ms / FIRST_EDGE_MS) / math.log(2)) + 1)
  -- The logarithm can land one bin off at an edge: the integer edges decide.
  while bin < LAST_WAIT_BIN and ms >= waitEdge(bin + 1) do bin = bin + 1 end
  while bin > 1 and ms < waitEdge(bin) do bin = bin - 1 end
  return bin
end

-- Adds the waits (ms) of admissions made now to this minute's slot.
local function recordWaits(metaKey, now, waits)
  if #waits == 0 then return end
  local minute = math.floor(now / WAIT_SLOT_MS)
  local field = 'w' .. (minute % WAIT_SLOTS)
  local counts, maxMs = {}, 0
  local raw = redis.call('HGET', metaKey, field)
  if raw then
    local m, mx, rest = string.match(raw, '^(%d+)|(%d+)|(.*)$')
    if tonumber(m) == minute then
      maxMs = tonumber(mx)
      for b, c in string.gmatch(rest, '(%d+):(%d+)') do counts[tonumber(b)] = tonumber(c) end
    end
  end
  for _, w in ipairs(waits) do
    if w < 0 then w = 0 end
    local b = waitBin(w)
    counts[b] = (counts[b] or 0) + 1
    if w > maxMs then maxMs = w end
  end
  local bins = {}
  for b in pairs(counts) do bins[#bins + 1] = b end
  table.sort(bins)
  local parts = {}
  for i, b in ipairs(bins) do parts[i] = b .. ':' .. counts[b] end
  redis.call('HSET', metaKey, field, minute .. '|' .. int(maxMs) .. '|' .. table.concat(parts, ','))
end

-- An entry with this score was made now; lastAt: meta kt. True when it wrote a checkpoint.
local function noteEntry(entriesKey, metaKey, now, score, lastAt)
  if lastAt and now - lastAt < CHECKPOINT_MS then return false end
  redis.call('ZADD', entriesKey, score, int(now))
  redis.call('HSET', metaKey, 'kt', int(now))
  return true
end

-- The waits (ms) of members admitted now, their entry scores (as Redis replied them,
-- strings) given in line order: from the opening for a pre-queue place (score in
-- [pb, sb)), else from the entry checkpoint at or below the score; -1 where unknown.
-- Reads only the checkpoints in the span of these scores.
local function waitsOf(entriesKey, now, scores, pb, sb, opensAt)
  local waits = {}
  local points, p = nil, 0
  for i, s in ipairs(scores) do
    local score = tonumber(s)
    local from
    if pb and sb and score >= pb and score < sb then
      from = opensAt
    else
      if not points then
        -- The checkpoint at or below the first such score, and every one up to the last score.
        points = redis.call('ZREVRANGEBYSCORE', entriesKey, s, '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
        local rest = redis.call('ZRANGEBYSCORE', entriesKey, '(' .. s, scores[#scores], 'WITHSCORES')
        for j = 1, #rest do points[#points + 1] = rest[j] end
        p = 1
      end
      while points[p + 3] and tonumber(points[p + 3]) <= score do p = p + 2 end
      if points[p + 1] and tonumber(points[p + 1]) <= score then from = tonumber(points[p]) end
    end
    waits[i] = from and math.max(0, now - from) or -1
  end
  return waits
end

-- Forgets the checkpoints no waiting member needs: below the head's own, or all but
-- the last when nobody waits.
local function trimEntries(entriesKey, waitingKey)
  local head = redis.call('ZRANGE', waitingKey, 0, 0, 'WITHSCORES')
  if head[2] then
    local point = redis.call('ZREVRANGEBYSCORE', entriesKey, head[2], '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
    if point[2] then redis.call('ZREMRANGEBYSCORE', entriesKey, '-inf', '(' .. point[2]) end
  else
    redis.call('ZREMRANGEBYRANK', entriesKey, 0, -2)
  end
end
