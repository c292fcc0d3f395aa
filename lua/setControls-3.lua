#!lua
--[[
  Change the queue's runtime controls (lua/includes/controls.lua), atomically: every
  instance's next call sees them. The caller validated each value's type and range;
  this script checks what needs the queue's state and Redis's clock, then writes.
  Idempotent: a patch that changes nothing writes nothing and keeps the version, so a
  re-sent call is harmless (a draw seed already set is kept). A committed draw is final:
  a new draw while members drawn with the last seed still wait keeps that seed (and its
  cohort chain); a draw with a new seed starts a new cohort chain.

  KEYS[1] waiting  zset member -> entry score
  KEYS[2] meta     hash: gen, seq, the controls, the limits (lr lb la), the cohort chain (kh kn)
  KEYS[3] log      list: the audit trail, newest first, capped (lua/includes/controlsLog.lua)

  ARGV[1] generation the caller knows ('' if none)
  ARGV[2] a fresh draw seed (64 hex digits), used only if this call starts a draw
  ARGV[3] that seed's SHA-256 (hex), the commitment published before opening
  ARGV[4] the actor, recorded in the log with the change
  ARGV[5] the patch as JSON, recorded verbatim
  ARGV[6] the caller's limits 'rate|burst|active' (each '' for none) to keep with the
          controls for every writer, or '-' to keep those stored. The patch is checked
          against the limits in force (the ones sent, else the stored): beyond them it is
          refused and nothing is written (the limits sent are still kept)
  ARGV[7..] the patch, as field/value pairs over cm cx cr cb ca co cs sk sm cn; the value ''
            clears cx (no message), co (open now), sk (no stock) and sm (the default
            sold-out message); ca -1 is "no cap". Stock set to 0 closes the queue with
            the sold-out message (lua/includes/stock.lua), as the last consume does.

  Returns { CONTROLS_OK, version } or { CONTROLS_REFUSED, field, reason } (nothing
  written), or { STATE_LOST }.
]]
--- @include "now"
--- @include "generation"
--- @include "newGeneration"
--- @include "controls"
--- @include "stock"
--- @include "controlsLog"
--- @include "cohort"

local CONTROLS_OK, CONTROLS_REFUSED = 1, 0
local expected, seed, commitment, actor, patchJson, limitsArg = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local FIRST_PAIR = 7
local PATCHABLE = { cm = true, cx = true, cr = true, cb = true, ca = true, co = true, cs = true, sk = true, sm = true, cn = true }
if not (expected and seed and #seed == 64 and commitment and #commitment == 64 and actor and patchJson and limitsArg and #ARGV % 2 == 0) then
  return redis.error_reply('ERR waitgate: bad setControls arguments')
end
for i = FIRST_PAIR, #ARGV, 2 do
  if not PATCHABLE[ARGV[i]] then return redis.error_reply('ERR waitgate: bad setControls field') end
end
local now = nowMs()
local gen = checkGeneration(KEYS[2], expected)
if not gen then return { STATE_LOST } end

-- The limits: those sent are kept (a queue with limits writes them as it starts), then
-- the patch is checked against the limits in force, whoever sent it.
local LIMIT_FIELDS = { 'lr', 'lb', 'la' }
local limits = redis.call('HMGET', KEYS[2], unpack(LIMIT_FIELDS))
if limitsArg ~= '-' then
  local sent = {}
  for v in string.gmatch(limitsArg .. '|', '([^|]*)|') do sent[#sent + 1] = v end
  if #sent ~= 3 then return redis.error_reply('ERR waitgate: bad setControls limits') end
  local set, unset = {}, {}
  for i, f in ipairs(LIMIT_FIELDS) do
    if sent[i] ~= '' then
      if not tonumber(sent[i]) then return redis.error_reply('ERR waitgate: bad setControls limits') end
      set[#set + 1], set[#set + 2] = f, sent[i]
    elseif limits[i] then
      unset[#unset + 1] = f
    end
    limits[i] = sent[i] ~= '' and sent[i] or false
  end
  if #set > 0 then
    if gen == '' then gen = newGeneration(KEYS[2]) end
    redis.call('HSET', KEYS[2], unpack(set))
  end
  if #unset > 0 then redis.call('HDEL', KEYS[2], unpack(unset)) end
end
local maxRate, maxBurst, maxActive = tonumber(limits[1]), tonumber(limits[2]), tonumber(limits[3])
for i = FIRST_PAIR, #ARGV, 2 do
  local f, v = ARGV[i], tonumber(ARGV[i + 1])
  if f == 'cr' and maxRate and v and v > maxRate then
    return { CONTROLS_REFUSED, 'admitRatePerSecond', 'must be at most ' .. limits[1] .. ' (limits.maxRatePerSecond)' }
  elseif f == 'cb' and maxBurst and v and v > maxBurst then
    return { CONTROLS_REFUSED, 'admitBurst', 'must be at most ' .. limits[2] .. ' (limits.maxBurst)' }
  elseif f == 'ca' and maxActive and v and (v < 0 or v > maxActive) then
    return { CONTROLS_REFUSED, 'maxActive', 'must be at most ' .. limits[3] .. ' (limits.maxActive), not ' .. (v < 0 and 'no cap' or ARGV[i + 1]) }
  end
end

local FIELDS = { 'cm', 'cx', 'cr', 'cb', 'ca', 'co', 'cs', 'cd', 'cc', 'cv', 'pb', 'sb', 'sk', 'sm', 'sa', 'cn', 'seq' }
local values = redis.call('HMGET', KEYS[2], unpack(FIELDS))
local current = {}
for i, f in ipairs(FIELDS) do current[f] = values[i] end
local nextValues = {}
for f, v in pairs(current) do nextValues[f] = v end
for i = FIRST_PAIR, #ARGV, 2 do
  local value = ARGV[i + 1]
  if value == '' then value = false end
  nextValues[ARGV[i]] = value
end

-- A patch that changes nothing is answered as applied (a re-sent call, even after the
-- opening it scheduled has passed), writing nothing.
local changed = false
for f in pairs(PATCHABLE) do
  if (nextValues[f] or false) ~= (current[f] or false) then changed = true end
end
if not changed then return { CONTROLS_OK, tonumber(current.cv) or 0 } end
-- What only the store can check: a draw needs an opening in the future, and a pre-queue
-- that has members keeps its order rule.
local pendingBefore = tonumber(current.co) ~= nil and now < tonumber(current.co)
local opensAt = tonumber(nextValues.co)
local pendingAfter = opensAt ~= nil and now < opensAt
local shuffleBefore, shuffleAfter = current.cs == '1', nextValues.cs == '1'
local touchesSchedule = false
for i = FIRST_PAIR, #ARGV, 2 do
  -- Removing the opening (co '') only opens the queue: it starts no draw, even with
  -- shuffle still on after an opening that has passed (schedule --cancel).
  if ARGV[i] == 'cs' or (ARGV[i] == 'co' and ARGV[i + 1] ~= '') then touchesSchedule = true end
end
-- A draw starts when the patch sets a shuffled schedule that was not already pending
-- (moving a pending draw's opening, even to now, keeps it).
local startsDraw = touchesSchedule and shuffleAfter and not (pendingBefore and shuffleBefore)
if startsDraw and not pendingAfter then
  if opensAt then return { CONTROLS_REFUSED, 'opensAt', 'is in the past: a shuffled pre-queue needs an opening in the future' } end
  return { CONTROLS_REFUSED, 'shuffle', 'needs opensAt in the future (the pre-queue is drawn at opensAt)' }
end
if pendingBefore and shuffleBefore ~= shuffleAfter and current.pb and current.sb then
  local preQueued = redis.call('ZCOUNT', KEYS[1], current.pb, '(' .. current.sb)
  if preQueued > 0 then
    return { CONTROLS_REFUSED, 'shuffle', 'cannot change once the pre-queue has members (' .. preQueued .. ' waiting for the opening)' }
  end
end

if gen == '' then gen = newGeneration(KEYS[2]) end

-- A committed draw is final: while members drawn with its seed wait (in the band of the
-- last pre-queue), a new draw keeps the seed and its commitment.
local drawnWaiting = 0
if current.cd and current.pb and current.sb then
  drawnWaiting = redis.call('ZCOUNT', KEYS[1], current.pb, '(' .. current.sb)
end

-- A new schedule (none pending before) starts a new pre-queue band above every score
-- given so far; entries after its opening score above the band. A pending one keeps it.
if pendingAfter and not pendingBefore then
  local pb = (tonumber(current.sb) or 0) + (tonumber(current.seq) or 0) + 1
  nextValues.pb = string.format('%.17g', pb)
  nextValues.sb = string.format('%.17g', pb + DRAW_RANGE)
end
-- The seed is made when a draw starts and kept after (a re-sent call keeps it).
if startsDraw and drawnWaiting > 0 then
  nextValues.cd, nextValues.cc = current.cd, current.cc
elseif startsDraw then
  nextValues.cd, nextValues.cc = seed, commitment
  restartCohort(KEYS[2]) -- a new seed: the cohort of this draw starts empty (lua/includes/cohort.lua)
elseif not shuffleAfter and pendingBefore and shuffleBefore then
  nextValues.cd, nextValues.cc = false, false -- the draw was called off before anyone joined it
end
nextValues.cv = tostring((tonumber(current.cv) or 0) + 1)
-- New stock: the tokens in play are counted again at the next admission step (until
-- then positions judge their odds by the stock left alone); none left closes the queue.
if (nextValues.sk or false) ~= (current.sk or false) then
  nextValues.sa = false
  if nextValues.sk == '0' then
    local closing = closeSoldOut({}, nextValues.sm, 0)
    nextValues.cm, nextValues.cx = closing[2], closing[4]
  end
end

local set, unset = {}, {}
for _, f in ipairs(FIELDS) do
  if f ~= 'seq' then
    if nextValues[f] then
      set[#set + 1] = f
      set[#set + 1] = nextValues[f]
    elseif current[f] then
      unset[#unset + 1] = f
    end
  end
end
redis.call('HSET', KEYS[2], unpack(set))
if #unset > 0 then redis.call('HDEL', KEYS[2], unpack(unset)) end
local newCommitment = nextValues.cc ~= current.cc and nextValues.cc or nil
logChange(KEYS[3], now, actor, patchJson, tonumber(nextValues.cv), newCommitment)
return { CONTROLS_OK, tonumber(nextValues.cv) }
