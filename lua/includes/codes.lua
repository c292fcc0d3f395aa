-- Invite codes (SPEC §17), for lua/enterIfAbsent-9.lua. Needs the lanes include.
-- `codes` hash: code -> "<lane name>|<uses left>"; a spent code stays, with 0 uses left,
--   so that adding it again (a re-sent addCodes) restores no use.

-- The lane index a code gives (its lane declared in ln, a use left), or nil. Reads only.
local function codeLane(codesKey, lanes, code)
  local value = redis.call('HGET', codesKey, code)
  if not value then return nil end
  local bar = string.find(value, '|', 1, true)
  if not bar then return nil end
  local left = tonumber(string.sub(value, bar + 1))
  if not left or left < 1 then return nil end
  return laneIndexOf(lanes, string.sub(value, 1, bar - 1))
end

-- Spends one use of a code codeLane accepted (lane index) in this same script call.
local function spendCode(codesKey, metaKey, code, index)
  redis.call('HINCRBY', metaKey, 'lu' .. index, -1)
  local value = redis.call('HGET', codesKey, code)
  local bar = string.find(value, '|', 1, true)
  redis.call('HSET', codesKey, code, string.sub(value, 1, bar) .. (tonumber(string.sub(value, bar + 1)) - 1))
end
