-- A member's token lives in one hash field: "tokenExpMs|claimExpMs|claimId|token" and,
-- while nobody has picked the token up (pickupTimeoutSeconds), "|pickupByMs"; once a
-- release of it counted as a failed order (lua/release-4.lua), "|[pickupByMs]|failedAtMs".
-- claimId is empty while the token is not claimed; a lapsed claim keeps its id so
-- that the lapsed claimer may still consume as long as nobody took the token over.
local function parseRecord(raw)
  if not raw then return nil end
  local tokenExp, claimExp, claimId, token, pickupBy, failedAt = string.match(raw, '^(%d+)|(%d+)|([^|]*)|([^|]+)|?(%d*)|?(%d*)$')
  if not tokenExp then return nil end
  return {
    tokenExp = tonumber(tokenExp), claimExp = tonumber(claimExp), claimId = claimId, token = token,
    pickupBy = tonumber(pickupBy) or 0, failedAt = tonumber(failedAt) or 0,
  }
end

local function formatRecord(r)
  local raw = int(r.tokenExp) .. '|' .. int(r.claimExp) .. '|' .. r.claimId .. '|' .. r.token
  local pickupBy = r.pickupBy and r.pickupBy > 0
  if pickupBy then raw = raw .. '|' .. int(r.pickupBy) end
  if r.failedAt and r.failedAt > 0 then raw = raw .. (pickupBy and '|' or '||') .. int(r.failedAt) end
  return raw
end

-- A READY answer is recorded as a pick-up at its instance's next flush of signs of
-- life, up to a second later (src/presence.ts): a token read just before its pick-up
-- deadline is kept this much longer, so that record still finds it (src/rates.ts).
local PICKUP_GRACE_MS = 2000

-- The moment the token stops existing: its TTL, pushed out by a live claim's lease,
-- or brought forward to its pick-up deadline (and grace) while nobody has read it.
local function deadlineOf(r)
  if r.claimId ~= '' and r.claimExp > r.tokenExp then return r.claimExp end
  if r.pickupBy > 0 and r.pickupBy + PICKUP_GRACE_MS < r.tokenExp then return r.pickupBy + PICKUP_GRACE_MS end
  return r.tokenExp
end
