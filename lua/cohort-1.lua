#!lua flags=no-writes
--[[
  A page of the cohort (lua/includes/cohort.lua): the salted hashes of the members who
  joined a shuffled pre-queue, in entry order, for the draw report. Read-only; the work
  is bounded by the page (at most MAX_PAGE entries).

  KEYS[1] meta     hash: gen, kh (chain head), kn (chain length), k<i> (the i-th hash)

  ARGV[1] generation the caller knows ('' if none)
  ARGV[2] the first entry to read (from 1)
  ARGV[3] how many entries to read (1..MAX_PAGE)

  Returns { head, length, hash1, hash2, ... } (head and length false for an empty chain)
  or { STATE_LOST }.
]]
--- @include "generation"

local MAX_PAGE = 1000
local gen = checkGeneration(KEYS[1], ARGV[1] or '')
if not gen then return { STATE_LOST } end
local from, count = tonumber(ARGV[2]), tonumber(ARGV[3])
if not from or not count or from < 1 or count < 1 or count > MAX_PAGE then
  return redis.error_reply('ERR waitgate: bad cohort arguments')
end
local state = redis.call('HMGET', KEYS[1], 'kh', 'kn')
local length = tonumber(state[2]) or 0
local reply = { state[1] or false, state[2] or false }
local last = math.min(length, from + count - 1)
if last < from then return reply end
local fields = {}
for i = from, last do fields[#fields + 1] = 'k' .. i end
local hashes = redis.call('HMGET', KEYS[1], unpack(fields))
for i = 1, #hashes do reply[i + 2] = hashes[i] end
return reply
