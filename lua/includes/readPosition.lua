-- Position of one member. The token is looked up before the rank, so an admitted
-- member is READY, never NOT_ENTERED. An expired record that has not been reaped
-- yet reads as absent.
--
-- The meta fields a position needs, in one HMGET:
--   [1] gen  [2..5] ws, wc, wp, wf (admission window)  [6] seq (last entry sequence)
local function readMeta(metaKey)
  return redis.call('HMGET', metaKey, 'gen', 'ws', 'wc', 'wp', 'wf', 'seq')
end

-- Reply: { status (0 NOT_ENTERED | 1 WAITING | 2 READY), rank|false, total,
--          token|false, tokenExpMs|false, nowMs, windowStart, windowCurrent,
--          windowPrevious, windowFirst, entrySeq|false, generation|false }
-- The generation is sent only when the caller does not know it yet (`expected`
-- differs): a reply is smaller on the hot path, and the caller keeps the one it knows.
local function positionReply(status, rank, total, record, now, meta, seq, gen, expected)
  local token, tokenExp = false, false
  if record then token, tokenExp = record.token, record.tokenExp end
  if gen == expected then gen = false end
  return { status, rank, total, token, tokenExp, now, meta[2], meta[3], meta[4], meta[5], seq, gen }
end

-- The position of a member whose live token record (or nil) was already read.
local function readPosition(waitingKey, member, record, now, meta, gen, expected)
  local total = redis.call('ZCARD', waitingKey)
  if record then return positionReply(2, false, total, record, now, meta, false, gen, expected) end
  local seq = redis.call('ZSCORE', waitingKey, member)
  if not seq then return positionReply(0, false, total, nil, now, meta, false, gen, expected) end
  return positionReply(1, redis.call('ZRANK', waitingKey, member), total, nil, now, meta, seq, gen, expected)
end

-- The member's token record if it is live (its deadline not passed), else nil.
local function liveRecord(tokensKey, member, now)
  local record = parseRecord(redis.call('HGET', tokensKey, member))
  if record and deadlineOf(record) > now then return record end
  return nil
end
