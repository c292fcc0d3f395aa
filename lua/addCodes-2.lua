#!lua
--[[
  Store invite codes for one lane (queue.addCodes, SPEC §17), and the lanes the caller
  declares, so every instance admits by the same lanes and shares.

  KEYS[1] codes    hash code -> "<lane>|<uses left>" (lua/includes/lanes.lua)
  KEYS[2] meta     hash: gen, ln (the lanes), lu<i> (uses left on lane i's codes)

  ARGV[1] generation the caller knows ('' if none)
  ARGV[2] the caller's lanes, "name=share,..." (validated by the caller): a lane already
          stored keeps its index and takes the share given; a new one is appended (at
          most MAX_LANES); a stored lane the caller does not name keeps its share
  ARGV[3] the lane of the codes (one of ARGV[2])   ARGV[4] uses of each code (>= 1)
  ARGV[5..] the codes, at most MAX_CODES (1,000) a call (validated by the caller)

  A code already stored is left as it is (its lane and the uses it has left): a repeated
  call adds nothing and restores no spent use. Returns the number of codes added, or
  STATE_LOST; an error reply for bad arguments or too many lanes, nothing written.
]]
--- @include "now"
--- @include "generation"
--- @include "lanes"

local MAX_CODES = 1000
local expected, declared, lane, uses = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
if not expected or not declared or not lane or not uses or uses < 1 or #ARGV < 5 or #ARGV - 4 > MAX_CODES then
  return redis.error_reply('ERR waitgate: bad addCodes arguments')
end
if not checkGeneration(KEYS[2], expected) then return STATE_LOST end
local lanes = parseLanes(redis.call('HGET', KEYS[2], 'ln'))
for _, given in ipairs(parseLanes(declared)) do
  local index = laneIndexOf(lanes, given.name)
  if index then lanes[index].share = given.share else lanes[#lanes + 1] = given end
end
if #lanes > MAX_LANES then return redis.error_reply('ERR waitgate: more than ' .. MAX_LANES .. ' lanes stored') end
if not laneIndexOf(lanes, lane) then return redis.error_reply('ERR waitgate: the codes\' lane is not declared') end
local parts = {}
for i, l in ipairs(lanes) do parts[i] = l.name .. '=' .. string.format('%.17g', l.share) end
redis.call('HSET', KEYS[2], 'ln', table.concat(parts, ','))
local added = 0
-- HGET then HSET rather than HSETNX: the commands of the documented ACL (docs/redis.md).
for i = 5, #ARGV do
  if not redis.call('HGET', KEYS[1], ARGV[i]) then
    redis.call('HSET', KEYS[1], ARGV[i], lane .. '|' .. int(uses))
    added = added + 1
  end
end
if added > 0 then redis.call('HINCRBY', KEYS[2], 'lu' .. laneIndexOf(lanes, lane), added * uses) end
return added
