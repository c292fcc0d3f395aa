-- The pace of the line, kept in meta for the wait estimate: how many members the steps
-- that left members waiting took off the line (admitted or dropped as abandoned) per
-- token the rate in force offered them (the rate times the time since the step before,
-- at most MAX_STEP_GAP_MS), each step's weight decaying over PACE_MEMORY_MS:
--   pm members moved   pc tokens offered   pz the last admission step (ms)   pf the factor
-- 1: the line moves at the rate in force; below 1: maxActive, a stalled drop bucket or a
-- late admitter held it back; above 1: abandoned members ahead make it move faster.
-- src/rates.ts nextPace is the same for MemoryStore (test/store/redis-rules.test.ts checks both).
local PACE_MEMORY_MS = 10000
local MIN_PACE, MAX_PACE = 0.05, 20
local MAX_STEP_GAP_MS = 5000
local PACE_FIELDS = { 'pm', 'pc', 'pz' }

-- The tokens the rate offered since the last step: rate x the time since (capped).
local function stepOffered(rate, lastStepAt, now)
  return rate * math.max(0, math.min(MAX_STEP_GAP_MS, now - lastStepAt)) / 1000
end

-- The sums after a step that moved `moved` members with `offered` tokens, and the factor.
local function nextPace(moved, offered, at, now, stepMoved, stepOffered)
  local keep = 0
  if at then keep = now > at and math.exp(-(now - at) / PACE_MEMORY_MS) or 1 end
  moved = (moved or 0) * keep + stepMoved
  offered = (offered or 0) * keep + stepOffered
  local factor = 1
  if offered > 0 then factor = math.min(MAX_PACE, math.max(MIN_PACE, moved / offered)) end
  return moved, offered, factor
end
