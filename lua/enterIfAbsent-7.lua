#!lua
--[[
  Join the queue unless the member is already waiting or holds a live token.
  Idempotent: a repeated call keeps the first sequence number, so the rank stays.

  KEYS[1] waiting  zset member -> entry sequence
  KEYS[2] tokens   hash member -> token record
  KEYS[3] active   zset member -> token deadline (ms)
  KEYS[4] leases   zset member -> claim lease expiry (ms)
  KEYS[5] meta     hash: gen, seq, bucket, admission window
  KEYS[6] seen     hash member -> last sign of life (ms), kept only near the head
  KEYS[7] entries  zset entry score -> time (ms): entry checkpoints (lua/includes/queueFigures.lua)

  ARGV[1] generation the caller knows ('' if none)   ARGV[2] member id (validated by the caller)
  ARGV[3] not after (Redis ms; '' for no limit): the caller stopped waiting then and was told
          the outcome is unknown. A call that arrives later (re-sent by ioredis, held in a
          Cluster failover retry) writes nothing: meanwhile the member may have entered again,
          been admitted and ordered, and a late enter would queue them for a second admission.
  ARGV[4] a fresh token ('' if none): issued at once to a new member in passthrough mode
  ARGV[5] the token's TTL (ms), for passthrough
  ARGV[6] presence head ('' for none): a waiting member whose rank is below it has
          its sign of life recorded in seen (abandonAfterSeconds); further back,
          nothing is written (the work follows the head of the line, not the crowd)

  Returns the positionReply (lua/includes/readPosition.lua) after the call, with a
  trailing 1 when this call joined the member (or let it through in passthrough), or
  { STATE_LOST }, { QUEUE_CLOSED, message } (a new member while closed), { NEED_TOKEN }
  (a new member in passthrough, and no token sent); an error reply when late.
  A new member joins the pre-queue while now < opensAt (lua/includes/controls.lua).

  This is the hot path of a flash crowd's first second, so it reads each thing
  once: a new member costs TIME, HMGET meta, HGET tokens, ZADD NX, HSET seq, HINCRBY
  (the entered total), ZCARD, and at most once a second a checkpoint (ZADD, HSET).
]]
--- @include "now"
--- @include "tokenRecord"
--- @include "pickUp"
--- @include "generation"
--- @include "admissionWindow"
--- @include "controls"
--- @include "newGeneration"
--- @include "readPosition"
--- @include "queueFigures"
--- @include "recordFigures"

local expected, member, freshToken, ttl = ARGV[1], ARGV[2], ARGV[4] or '', tonumber(ARGV[5] or '')
local presenceHead = tonumber(ARGV[6] or '')
if not expected or not member or member == '' then return redis.error_reply('ERR waitgate: bad enter arguments') end
local now = nowMs()
local notAfter = tonumber(ARGV[3])
if notAfter and now > notAfter then return redis.error_reply('ERR waitgate: enter arrived after its deadline; nothing written') end
local meta = readMeta(KEYS[5])
local gen = acceptGeneration(meta[1], expected)
if not gen then return { STATE_LOST } end
if gen == '' then gen = newGeneration(KEYS[5]) end

local record = parseRecord(redis.call('HGET', KEYS[2], member))
if record and deadlineOf(record) <= now then
  -- The token expired unused: drop it here so the member can join at the back.
  redis.call('HDEL', KEYS[2], member)
  redis.call('ZREM', KEYS[3], member)
  redis.call('ZREM', KEYS[4], member)
  redis.call('HINCRBY', KEYS[5], 'tx', 1)
  record = nil
end
if record then
  pickUp(KEYS[2], KEYS[3], member, record) -- answering READY: the token is picked up
  return readPosition(KEYS[1], member, record, now, meta, gen, expected)
end
-- A waiting member near the head: its enter is a sign of life.
local function present(reply)
  if presenceHead and reply[2] and reply[2] < presenceHead then redis.call('HSET', KEYS[6], member, now) end
  return reply
end
local C = META_CONTROLS_AT
local mode = meta[C] or 'open'
if mode ~= 'open' then
  -- Closed and passthrough treat a new member differently: find out first whether it waits.
  if redis.call('ZSCORE', KEYS[1], member) then return present(readPosition(KEYS[1], member, nil, now, meta, gen, expected)) end
  if mode == 'closed' then return { QUEUE_CLOSED, meta[C + 1] or false } end
  -- Passthrough lets a new member through, except before a scheduled opening: then it
  -- joins the pre-queue like everyone before it (nobody jumps the early arrivals).
  local opensAt = tonumber(meta[C + 2])
  if mode == 'passthrough' and not (opensAt and now < opensAt) then
    if freshToken == '' or not ttl or ttl <= 0 then return { NEED_TOKEN } end
    -- Let through at once: a token, as admission would issue it, without the bucket or maxActive.
    local issued = { tokenExp = now + ttl, claimExp = 0, claimId = '', token = freshToken, pickupBy = 0 }
    redis.call('HSET', KEYS[2], member, formatRecord(issued))
    redis.call('ZADD', KEYS[3], issued.tokenExp, member)
    redis.call('HINCRBY', KEYS[5], 'te', 1)
    redis.call('HINCRBY', KEYS[5], 'ta', 1)
    recordWaits(KEYS[5], now, { 0 })
    local reply = readPosition(KEYS[1], member, issued, now, meta, gen, expected)
    reply[#reply + 1] = 1
    return reply
  end
end
-- NX: a member already waiting keeps its first score (and the candidate is not used).
local seq = (tonumber(meta[2]) or 0) + 1
local score = entryScore(now, seq, tonumber(meta[C + 2]), meta[C + 3], tonumber(meta[C + 4]), tonumber(meta[META_SB]), meta[META_SEED], member)
if redis.call('ZADD', KEYS[1], 'NX', score, member) == 0 then
  return present(readPosition(KEYS[1], member, nil, now, meta, gen, expected))
end
redis.call('HSET', KEYS[5], 'seq', seq)
redis.call('HINCRBY', KEYS[5], 'te', 1)
-- A pre-queue place waits from the opening; any other from its entry checkpoint.
local opensAt = tonumber(meta[C + 2])
if not (opensAt and now < opensAt and meta[C + 4]) then noteEntry(KEYS[7], KEYS[5], now, score, tonumber(meta[META_KT])) end
local total = redis.call('ZCARD', KEYS[1])
-- A new entry scores above everyone (sb + seq, or pb + seq in a FIFO pre-queue), so it is
-- last; only a drawn pre-queue place needs ZRANK.
local rank = total - 1
if meta[C + 3] == '1' and score < (tonumber(meta[META_SB]) or 0) then rank = redis.call('ZRANK', KEYS[1], member) end
local reply = present(positionReply(1, rank, total, nil, now, meta, score, gen, expected))
reply[#reply + 1] = 1
return reply
