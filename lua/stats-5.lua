#!lua flags=no-writes
--[[
  Queue counters, read-only.

  KEYS[1] waiting  zset member -> entry sequence
  KEYS[2] active   zset member -> token deadline (ms)
  KEYS[3] leases   zset member -> claim lease expiry (ms)
  KEYS[4] meta     hash: gen, admission window (lua/includes/admissionWindow.lua), ln and
                   lc (the lanes and their carries, lua/includes/lanes.lua)
  KEYS[5] lanes    zset member -> lane score (lua/includes/lanes.lua)

  ARGV[1] generation the caller knows ('' if none)

  Returns { waiting, active, claimed, nowMs, generation, abandoned (members dropped
            since the queue began), then the window values (admissionWindow.lua), then the totals
            entered, admitted, consumed, expired, then the ten wait slots w0 .. w9
            (lua/includes/queueFigures.lua; false where empty), then cr (the rate
            the controls pin) and ar (the adaptive rate in force, orderHealth.lua),
            false when unset, then ln (false: no lanes) and, per lane in index order,
            its members waiting (ZCOUNT over its band) and the uses left on its codes
            (meta lu<i>) }, or { STATE_LOST }.
  The waiting count is every lane's, the default one included.
]]
--- @include "now"
--- @include "generation"
--- @include "admissionWindow"
--- @include "queueFigures"
--- @include "lanes"

local gen = checkGeneration(KEYS[4], ARGV[1] or '')
if not gen then return { STATE_LOST } end
local now = nowMs()
local fields = {}
for _, f in ipairs(WINDOW_FIELDS) do fields[#fields + 1] = f end
for _, f in ipairs({ 'ab', 'te', 'ta', 'tc', 'tx' }) do fields[#fields + 1] = f end
for slot = 0, WAIT_SLOTS - 1 do fields[#fields + 1] = 'w' .. slot end
fields[#fields + 1] = 'cr'
fields[#fields + 1] = 'ar'
fields[#fields + 1] = 'ln'
local meta = redis.call('HMGET', KEYS[4], unpack(fields))
local W = #WINDOW_FIELDS
local laneCounts = {}
local lanes = parseLanes(meta[#fields])
for i = 1, #lanes do
  laneCounts[i] = redis.call('ZCOUNT', KEYS[5], i * LANE_SPAN, '(' .. string.format('%.17g', (i + 1) * LANE_SPAN))
end
local reply = appendWindow({ redis.call('ZCARD', KEYS[1]) + (#lanes > 0 and redis.call('ZCARD', KEYS[5]) or 0),
                             redis.call('ZCOUNT', KEYS[2], '(' .. int(now), '+inf'),
                             redis.call('ZCOUNT', KEYS[3], '(' .. int(now), '+inf'),
                             now, gen, tonumber(meta[W + 1] or '0') }, meta, 1)
for i = W + 2, W + 5 do reply[#reply + 1] = tonumber(meta[i] or '0') end
for i = W + 6, #fields do reply[#reply + 1] = meta[i] or false end -- the slots, cr, ar, ln
for i = 1, #laneCounts do
  reply[#reply + 1] = laneCounts[i]
  reply[#reply + 1] = tonumber(redis.call('HGET', KEYS[4], 'lu' .. i) or '0')
end
return reply
