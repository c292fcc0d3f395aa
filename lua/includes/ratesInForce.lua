-- What every instance derives from the rate and burst in force (the controls in meta,
-- adaptive admission's rate, or the caller's options), computed here from what the
-- store holds so that no instance acts on a value it happens to remember
-- (src/rates.ts is the same for MemoryStore and for the instances' own figures).
local MAX_BURST = 10000

-- The burst in force when admitBurst was never set: the rate in force, one second's worth.
local function defaultBurst(rate)
  return math.min(MAX_BURST, math.max(1, math.floor(rate)))
end

-- How far from the head waiting members' calls are recorded as signs of life: twice
-- what can be admitted within abandonAfter (a full bucket plus the rate over that time).
local function presenceHead(rate, burst, abandonAfter)
  return math.ceil(2 * (burst + rate * abandonAfter / 1000))
end
