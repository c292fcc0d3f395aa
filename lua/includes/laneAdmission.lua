-- An admission step over the lanes (SPEC §17; src/lanes.ts laneQuotas is the same rule
-- for MemoryStore). Needs the lanes and takeFromHead includes.
-- Each named lane i is owed share_i * n of the step's n places plus its carry (the
-- fraction it was owed and did not get before): it gets the whole part, at most its
-- length, and keeps the fraction as its carry (below 1), so a lane gets within one member
-- of its share each step and exactly its share over many. A lane with fewer members than
-- it is owed takes them all and carries nothing. The default lane takes the rest, and
-- what the default lane cannot use goes to the named lanes in index order.

-- quotas[i] for each named lane, the default lane's quota, and the new carries.
local function laneQuotas(n, lanes, lengths, defaultLength, carries)
  local quotas, next, given = {}, {}, 0
  for i, lane in ipairs(lanes) do
    local want = n * lane.share + (carries[i] or 0)
    local whole = math.min(math.floor(want + 1e-9), n - given)
    if lengths[i] >= whole then
      quotas[i] = whole
      next[i] = math.min(1, math.max(0, want - whole))
    else
      quotas[i] = lengths[i]
      next[i] = 0
    end
    given = given + quotas[i]
  end
  local default = math.min(n - given, defaultLength)
  local rest = n - given - default
  for i = 1, #lanes do
    local extra = math.min(rest, lengths[i] - quotas[i])
    quotas[i], rest = quotas[i] + extra, rest - extra
  end
  return quotas, default, next
end

-- Meta lc as a list of numbers, and back.
local function parseCarries(lc)
  local carries = {}
  if lc then for c in string.gmatch(lc, '[^,]+') do carries[#carries + 1] = tonumber(c) or 0 end end
  return carries
end

local function formatCarries(carries)
  local parts = {}
  for i = 1, #carries do parts[i] = string.format('%.17g', carries[i]) end
  return table.concat(parts, ',')
end

-- The members of each named lane (ZCOUNT over its band).
local function laneLengths(lanesKey, lanes)
  local lengths = {}
  for i = 1, #lanes do
    local base = i * LANE_SPAN
    lengths[i] = redis.call('ZCOUNT', lanesKey, base, '(' .. string.format('%.17g', base + LANE_SPAN))
  end
  return lengths
end

-- takeFromHead over the default lane and each named lane by its quota. Returns what
-- takeFromHead returns, the admitted in the order of their entry sequence across lanes
-- (a lane member's score as the default lane's would be: sb + sequence, so waitsOf reads
-- its entry checkpoint), and the new carries. Drops share one budget; each lane holds
-- at most MAX_HELD.
local function takeByShares(waitingKey, lanesKey, seenKey, now, n, lanes, lengths, defaultLength, carries, sb, abandonAfter, holdSilent, budget)
  local quotas, default, nextCarries = laneQuotas(n, lanes, lengths, defaultLength, carries)
  local picked, dropped, held = {}, {}, 0
  -- Line 0 is the default lane, line i the named lane i (its band i * LANE_SPAN).
  for line = 0, #lanes do
    local count = line == 0 and default or quotas[line]
    if count > 0 then
      local ids, scores, out, h
      if line == 0 then
        ids, scores, out, h = takeFromHead(waitingKey, seenKey, now, count, abandonAfter, holdSilent, budget - #dropped)
      else
        ids, scores, out, h = takeFromHead(lanesKey, seenKey, now, count, abandonAfter, holdSilent, budget - #dropped, line * LANE_SPAN)
      end
      for i = 1, #ids do
        -- A lane member's score as the default lane's would be: sb + its sequence.
        local score = tonumber(scores[i])
        if line > 0 then score = sb + score - line * LANE_SPAN end
        picked[#picked + 1] = { ids[i], score }
      end
      for i = 1, #out do dropped[#dropped + 1] = out[i] end
      held = held + h
    end
  end
  table.sort(picked, function(a, b) return a[2] < b[2] end)
  local admitted, admittedScores = {}, {}
  for i, p in ipairs(picked) do admitted[i], admittedScores[i] = p[1], string.format('%.17g', p[2]) end
  return admitted, admittedScores, dropped, held, nextCarries
end
