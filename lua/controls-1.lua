#!lua flags=no-writes
--[[
  The queue's runtime controls as stored (lua/includes/controls.lua), read-only.

  KEYS[1] meta     hash: gen, the controls

  ARGV[1] generation the caller knows ('' if none)

  Returns { nowMs, cm, cx, cr, cb, ca, co, cs, cd, cc, cv, generation, ar, sk, sm, cn, lr, lb, la, kh, kn } with false
  for a field never set, or { STATE_LOST }. The caller shows the draw seed only once
  now >= opensAt.
]]
--- @include "now"
--- @include "generation"

local gen = checkGeneration(KEYS[1], ARGV[1] or '')
if not gen then return { STATE_LOST } end
local values = redis.call('HMGET', KEYS[1], 'cm', 'cx', 'cr', 'cb', 'ca', 'co', 'cs', 'cd', 'cc', 'cv', 'ar', 'sk', 'sm', 'cn', 'lr', 'lb', 'la', 'kh', 'kn')
local reply = { nowMs() }
for i = 1, 10 do reply[i + 1] = values[i] or false end
reply[12] = gen
reply[13] = values[11] or false -- the adaptive rate in force (lua/includes/orderHealth.lua)
reply[14] = values[12] or false -- stock left (lua/includes/stock.lua)
reply[15] = values[13] or false -- the sold-out message set
reply[16] = values[14] or false -- the safety net set (lua/includes/safetyNet.lua)
for i = 15, 17 do reply[i + 2] = values[i] or false end -- the limits kept (lua/setControls-3.lua)
reply[20] = values[18] or false -- the cohort chain's head (lua/includes/cohort.lua)
reply[21] = values[19] or false -- and its length
return reply
