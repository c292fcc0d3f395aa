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
local PACE_SNAP = 0.02
local MAX_STEP_GAP_MS = 5000
-- The factor is published once the counted steps offered this many tokens (decayed).
local MIN_PACE_EVIDENCE = 1
local PACE_FIELDS = { 'pm', 'pc', 'pz' }

-- The tokens the rate offered since the last step: rate x the time since (capped).
local function stepOffered(rate, lastStepAt, now)
  return rate * math.max(0, math.min(MAX_STEP_GAP_MS, now - lastStepAt)) / 1000
end

-- What a step that admitted n of the `whole` tokens in the bucket offered: a step that
-- used them all, its bucket not at its burst, moved as fast as the bucket let it (n: a
-- pace of 1, more with drops); one held back by something else (maxActive, the drop
-- bucket, the held) or whose bucket overflowed (steps further apart than the burst
-- lasts) was offered the rate since the step before, or what it admitted if more.
local function stepOffer(n, whole, full, rate, lastStepAt, now)
  if n >= whole and not full then return n end
  return math.max(n, stepOffered(rate, lastStepAt, now))
end

-- The sums after a step that moved `moved` members with `offered` tokens, and the factor.
local function nextPace(moved, offered, at, now, stepMoved, stepOffered)
  local keep = 0
  if at then keep = now > at and math.exp(-(now - at) / PACE_MEMORY_MS) or 1 end
  moved = (moved or 0) * keep + stepMoved
  offered = (offered or 0) * keep + stepOffered
  local factor = 1
  if offered > 0 then factor = math.min(MAX_PACE, math.max(MIN_PACE, moved / offered)) end
  -- Within PACE_SNAP of 1 the line moves at the rate: whole tokens against a fractional
  -- refill must not make an estimate a second longer than rank / rate.
  if math.abs(factor - 1) < PACE_SNAP then factor = 1 end
  return moved, offered, factor
end
