#!lua flags=no-writes
--[[
  Queue counters, read-only.

  KEYS[1] waiting  zset member -> entry sequence
  KEYS[2] active   zset member -> token deadline (ms)
  KEYS[3] leases   zset member -> claim lease expiry (ms)
  KEYS[4] meta     hash: gen, admission window (lua/includes/admissionWindow.lua)

  ARGV[1] generation the caller knows ('' if none)

  Returns { waiting, active, claimed, nowMs, generation, abandoned (members dropped
            since the queue began), then the window values (admissionWindow.lua), then the totals
            entered, admitted, consumed, expired, then the ten wait slots w0 .. w9
            (lua/includes/queueFigures.lua; false where empty), then cr (the rate
            the controls pin) and ar (the adaptive rate in force, orderHealth.lua),
            false when unset }, or { STATE_LOST }.
]]
--- @include "now"
--- @include "generation"
--- @include "admissionWindow"
--- @include "queueFigures"

local gen = checkGeneration(KEYS[4], ARGV[1] or '')
if not gen then return { STATE_LOST } end
local now = nowMs()
local fields = {}
for _, f in ipairs(WINDOW_FIELDS) do fields[#fields + 1] = f end
for _, f in ipairs({ 'ab', 'te', 'ta', 'tc', 'tx' }) do fields[#fields + 1] = f end
for slot = 0, WAIT_SLOTS - 1 do fields[#fields + 1] = 'w' .. slot end
fields[#fields + 1] = 'cr'
fields[#fields + 1] = 'ar'
local meta = redis.call('HMGET', KEYS[4], unpack(fields))
local W = #WINDOW_FIELDS
local reply = appendWindow({ redis.call('ZCARD', KEYS[1]),
                             redis.call('ZCOUNT', KEYS[2], '(' .. int(now), '+inf'),
                             redis.call('ZCOUNT', KEYS[3], '(' .. int(now), '+inf'),
                             now, gen, tonumber(meta[W + 1] or '0') }, meta, 1)
for i = W + 2, W + 5 do reply[#reply + 1] = tonumber(meta[i] or '0') end
for i = W + 6, #fields do reply[#reply + 1] = meta[i] or false end -- the slots, cr, ar
return reply
