#!lua flags=no-writes
--[[
  The audit trail of the controls (lua/includes/controlsLog.lua), newest first, read-only.

  KEYS[1] log      list: one JSON entry per change, newest first, capped

  ARGV[1] generation the caller knows (not checked: the log is history, read as it stands)
  ARGV[2] how many entries at most (1..CONTROLS_LOG_CAP)

  Returns the entries, as JSON text. Work: bounded by ARGV[2] (at most the cap).
]]
--- @include "controlsLog"

local limit = tonumber(ARGV[2])
if not limit or limit < 1 or limit ~= math.floor(limit) then return redis.error_reply('ERR waitgate: bad controlsLog arguments') end
return redis.call('LRANGE', KEYS[1], 0, math.min(limit, CONTROLS_LOG_CAP) - 1)
