#!lua
--[[
  Join the queue unless the member is already waiting or holds a live token.
  Idempotent: a repeated call keeps the first sequence number, so the rank stays.

  KEYS[1] waiting  zset member -> entry sequence
  KEYS[2] tokens   hash member -> token record
  KEYS[3] active   zset member -> token deadline (ms)
  KEYS[4] leases   zset member -> claim lease expiry (ms)
  KEYS[5] meta     hash: gen, seq, bucket, admission window

  ARGV[1] generation the caller knows ('' if none)   ARGV[2] member id (validated by the caller)
  ARGV[3] not after (Redis ms; '' for no limit): the caller stopped waiting then and was told
          the outcome is unknown. A call that arrives later (re-sent by ioredis, held in a
          Cluster failover retry) writes nothing: meanwhile the member may have entered again,
          been admitted and ordered, and a late enter would queue them for a second admission.

  Returns the positionReply (lua/includes/readPosition.lua) after the call, or
  { STATE_LOST }; an error reply when late.

  This is the hot path of a flash crowd's first second, so it reads each thing
  once: a new member costs TIME, HMGET meta, HGET tokens, ZADD NX, HSET seq, ZCARD.
]]
--- @include "now"
--- @include "tokenRecord"
--- @include "generation"
--- @include "admissionWindow"
--- @include "newGeneration"
--- @include "readPosition"

local expected, member = ARGV[1], ARGV[2]
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
  record = nil
end
if record then return readPosition(KEYS[1], member, record, now, meta, gen, expected) end

-- NX: a member already waiting keeps its first sequence (and the candidate is not used).
local seq = (tonumber(meta[2]) or 0) + 1
if redis.call('ZADD', KEYS[1], 'NX', seq, member) == 0 then
  return readPosition(KEYS[1], member, nil, now, meta, gen, expected)
end
redis.call('HSET', KEYS[5], 'seq', seq)
-- Sequences only grow (meta's seq is the last one issued), so the new member is last.
local total = redis.call('ZCARD', KEYS[1])
return positionReply(1, total - 1, total, nil, now, meta, seq, gen, expected)
