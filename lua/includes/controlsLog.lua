-- The audit trail of the controls (SPEC §18): one JSON entry per change, newest first, in
-- the list key "<tag>:log", capped at CONTROLS_LOG_CAP entries (LPUSH, then LTRIM: the
-- oldest fall off). { at (Redis ms), actor, patch (as sent), version (after it)
-- [, drawCommitment (a draw this change started)] }. src/controls-log.ts
-- CONTROLS_LOG_CAP is the same constant; src/store/memory/controls-log.ts the same rule.
local CONTROLS_LOG_CAP = 1000

-- Records one change: patchJson is the patch as JSON text (kept verbatim); actor '' is null.
local function logChange(logKey, now, actor, patchJson, version, drawCommitment)
  local entry = '{"at":' .. string.format('%d', now) .. ',"actor":' .. (actor ~= '' and cjson.encode(actor) or 'null') .. ',"patch":' .. patchJson
    .. ',"version":' .. string.format('%d', version)
  if drawCommitment then entry = entry .. ',"drawCommitment":' .. cjson.encode(drawCommitment) end
  redis.call('LPUSH', logKey, entry .. '}')
  redis.call('LTRIM', logKey, 0, CONTROLS_LOG_CAP - 1)
end
