#!lua flags=no-writes
--[[
  The shape of the line, read-only: lets each app instance estimate ranks for
  polls without a Redis call per poll (see src/position-cache.ts).

  KEYS[1] waiting  zset member -> entry score
  KEYS[2] meta     hash: gen, admission window, controls, hm

  ARGV[1] generation the caller knows ('' if none)

  Returns { totalWaiting, headScore|false, lastScore|false, nowMs, generation, the
            six window values (lua/includes/admissionWindow.lua), the six controls a
            position shows (lua/includes/controls.lua), moves, rank, score, rank,
            score, ... }, or { STATE_LOST }. moves: meta hm, the members admission
            steps took off the line in this generation (lua/popAndIssue-9.lua pushes
            it after each step).

  After the controls come rank probes, as (rank, score) pairs by increasing rank:
  score is the entry score of the member at that 0-based rank. Ranks 0, then 64,
  128, 256, ... (powers of two from 64) while below totalWaiting - 1, then
  totalWaiting - 1; none when nobody waits. Where the line holds a pre-queue (scores
  from pb up to sb), the members on both sides of each of those two boundaries are
  probed too, so that no interpolated segment spans a gap between score bands.
  Where that pre-queue was drawn (cs is '1', or a draw seed cd is kept: shuffle
  turned off after the opening leaves the drawn scores), its members' scores are
  random, so the count between two probes strays from a straight line by about the
  square root of the segment's length; the ranks of DENSE_RANKS that fall inside the
  band are probed too: from rank 768, every max(16, floor(r * r / 50000)) ranks up to
  rank 50,000 (68 ranks in all, 768, 784, ..., 47193), so that from rank 1,000 the
  segment around a rank r is at most (r / 224)^2 long and the estimate stays within
  about 1% (src/store/memory/snapshots.ts DENSE_RANKS is the same list).
  Rank 0 and totalWaiting - 1 are the head and the last member already read; each
  other probe is one ZRANGE key r r WITHSCORES, O(log N): 11 at 100,000 waiting,
  14 at 1,000,000, plus 2 ZCOUNT and up to 4 ZRANGE around a pre-queue and up to 68
  ZRANGE inside a drawn one, whatever its size: no work proportional to the crowd.
  All in this one script, so the probes and the rest are one consistent read.
]]
--- @include "now"
--- @include "generation"
--- @include "admissionWindow"
--- @include "controls"

local gen = checkGeneration(KEYS[2], ARGV[1] or '')
if not gen then return { STATE_LOST } end
local total = redis.call('ZCARD', KEYS[1])
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')

-- meta: the window, the controls a position shows, then pb and sb (the band
-- boundaries) and cs and cd (whether the band was drawn)
local fields = {}
for _, f in ipairs(WINDOW_FIELDS) do fields[#fields + 1] = f end
for _, f in ipairs(POSITION_CONTROL_FIELDS) do fields[#fields + 1] = f end
local shown = #fields
for _, f in ipairs({ 'pb', 'sb', 'cs', 'cd', 'hm' }) do fields[#fields + 1] = f end
local meta = redis.call('HMGET', KEYS[2], unpack(fields))
local reply = { total, head[2] or false, last[2] or false, nowMs(), gen }
for i = 1, shown do reply[#reply + 1] = meta[i] or false end
reply[#reply + 1] = tonumber(meta[shown + 5]) or 0
local pb, sb = tonumber(meta[shown + 1]), tonumber(meta[shown + 2])
local drawn = meta[shown + 3] == '1' or (meta[shown + 4] or '') ~= ''

-- The members with a score below a band boundary: the rank of the first at or above it.
local function countBelow(boundary)
  return redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. string.format('%.17g', boundary))
end

-- The ranks to probe (rank -> score when already known, else false).
local ranks = {}
if total > 0 and head[2] and last[2] then
  ranks[0] = head[2]
  local rank = 64
  while rank < total - 1 do
    ranks[rank] = false
    rank = rank * 2
  end
  ranks[total - 1] = last[2]
  if pb and sb then
    local from, to = countBelow(pb), countBelow(sb) -- the band's ranks: from .. to - 1
    for _, below in ipairs({ from, to }) do
      if below > 0 and below < total then
        ranks[below - 1] = ranks[below - 1] or false
        ranks[below] = ranks[below] or false
      end
    end
    if drawn then
      -- DENSE_RANKS: from 768, every max(16, floor(r * r / 50000)) ranks below 50,000.
      rank = 768
      while rank < 50000 and rank < to do
        if rank >= from then ranks[rank] = ranks[rank] or false end
        rank = rank + math.max(16, math.floor(rank * rank / 50000))
      end
    end
  end
end
local ordered = {}
for rank in pairs(ranks) do ordered[#ordered + 1] = rank end
table.sort(ordered)
for _, rank in ipairs(ordered) do
  reply[#reply + 1] = rank
  reply[#reply + 1] = ranks[rank] or redis.call('ZRANGE', KEYS[1], rank, rank, 'WITHSCORES')[2]
end
return reply
