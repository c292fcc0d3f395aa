-- A member's token lives in one hash field: "tokenExpMs|claimExpMs|claimId|token".
-- claimId is empty while the token is not claimed; a lapsed claim keeps its id so
-- that the lapsed claimer may still consume as long as nobody took the token over.
local function parseRecord(raw)
  if not raw then return nil end
  local tokenExp, claimExp, claimId, token = string.match(raw, '^(%d+)|(%d+)|([^|]*)|(.+)$')
  if not tokenExp then return nil end
  return { tokenExp = tonumber(tokenExp), claimExp = tonumber(claimExp), claimId = claimId, token = token }
end

local function formatRecord(r)
  return int(r.tokenExp) .. '|' .. int(r.claimExp) .. '|' .. r.claimId .. '|' .. r.token
end

-- The moment the token stops existing: its TTL, pushed out by a live claim's lease.
local function deadlineOf(r)
  if r.claimId ~= '' and r.claimExp > r.tokenExp then return r.claimExp end
  return r.tokenExp
end
