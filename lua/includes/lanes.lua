-- Invite codes and lanes (SPEC §17; src/lanes.ts keeps the same rules for MemoryStore).
-- The default lane is the `waiting` zset. Members who entered with a code wait in ONE
-- more zset, `lanes`, scored laneIndex * LANE_SPAN + entry sequence: a lane is one band
-- of scores, its head is ZRANGE BYSCORE over the band, a member's rank in its lane is
-- ZCOUNT from the band's base to its score. MAX_LANES * LANE_SPAN + any sequence stays
-- below 2^53, so every score is an exact double.
-- meta ln: the lanes as stored, "name=share,name=share,..." in index order (1-based);
--   a lane keeps its index once stored (lua/addCodes-2.lua appends new ones).
-- meta lc: each lane's fractional carry of places, "c1,c2,...", so that over many
--   admission steps a lane gets exactly its share (lua/includes/laneAdmission.lua).
-- meta lu1 .. lu8: the uses left on each lane's codes (for stats); the codes
--   themselves: lua/includes/codes.lua.
local LANE_SPAN = 1099511627776 -- 2^40
local MAX_LANES = 8

-- { { name, share }, ... } in index order, from meta ln (nil or false: none).
local function parseLanes(ln)
  local lanes = {}
  if not ln then return lanes end
  for name, share in string.gmatch(ln, '([^=,]+)=([^,]+)') do lanes[#lanes + 1] = { name = name, share = tonumber(share) } end
  return lanes
end

local function laneIndexOf(lanes, name)
  for i, lane in ipairs(lanes) do
    if lane.name == name then return i end
  end
  return nil
end

-- A lane member's rank in its own lane: the members of its band scored below it.
local function laneRank(lanesKey, score)
  local s = tonumber(score)
  return redis.call('ZCOUNT', lanesKey, math.floor(s / LANE_SPAN) * LANE_SPAN, '(' .. string.format('%.17g', s))
end
