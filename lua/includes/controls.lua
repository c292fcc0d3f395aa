-- Runtime controls (setControls), kept in meta beside the queue's own state. A field
-- that was never set is absent: the caller's own option applies.
--   cm mode (open | paused | passthrough | closed)   cx message
--   co opensAt (ms)   cs shuffle ('1' or '0')   cr rate   cb burst   ca maxActive (-1: no cap)
--   cd draw seed (hex)   cc draw commitment (hex)   cv version
--   pb first score of the pre-queue   sb score base of entries after opening
--   sk stock left (absent: no stock)   sm sold-out message (absent: SOLD_OUT)
--   sa stock left minus the tokens in play, as the last admission step saw it (consumes
--      take one of each, so they keep it); absent until a step after stock was set
--   cn safety net ('1' on, '0' off; absent: the caller's option, lua/includes/safetyNet.lua)
-- Scores: a member entering while now < opensAt joins the pre-queue, scored
-- pb + its sequence (FIFO) or pb + its draw (shuffle); later members score sb + their
-- sequence, with sb = pb + DRAW_RANGE, so the waiting set is already in the order of
-- admission at opensAt and opening costs nothing.
--
-- What a position shows of them, in this order, last in its reply (cr, cb and ar, the
-- rate adaptive admission set: the instance derives its presence head and estimates
-- from the rate and burst in force, never from a value it remembers; sk and sa: the odds
-- of a waiting member, rank < sa):
local POSITION_CONTROL_FIELDS = { 'cm', 'cx', 'co', 'cs', 'pb', 'cr', 'cb', 'ar', 'sk', 'sa', 'cn' }
local DRAW_RANGE = 1099511627776 -- 2^40: a draw is the first 40 bits of a SHA-1
local QUEUE_CLOSED = -2 -- enter of a new member while closed: { QUEUE_CLOSED, message }
local NEED_TOKEN = -3   -- enter of a new member in passthrough, sent without a token

-- The member's place in a shuffled pre-queue: SHA-1(seed hex .. ':' .. member id),
-- its first 10 hex digits as an integer (src/controls.ts drawOrder computes the same).
local function drawScore(seed, member)
  return tonumber(string.sub(redis.sha1hex(seed .. ':' .. member), 1, 10), 16)
end

-- The score of a member entering now with sequence seq, given the meta values
-- opensAt, shuffle, pb, sb and seed.
local function entryScore(now, seq, opensAt, shuffle, pb, sb, seed, member)
  if opensAt and now < opensAt and pb then
    if shuffle == '1' and seed then return pb + drawScore(seed, member) end
    return pb + seq
  end
  return (sb or 0) + seq
end
