-- Position of one member. The token is looked up before the rank, so an admitted
-- member is READY, never NOT_ENTERED. An expired record that has not been reaped
-- yet reads as absent.
--
-- The meta fields a position needs, in one HMGET (needs the admissionWindow include):
--   [1] gen  [2] seq (last entry sequence)  [3..8] the admission window
local META_WINDOW_AT = 3
local function readMeta(metaKey)
  return redis.call('HMGET', metaKey, 'gen', 'seq', unpack(WINDOW_FIELDS))
end

-- Reply: { status (0 NOT_ENTERED | 1 WAITING | 2 READY), rank|false, total,
--          token|false, tokenExpMs|false, nowMs, entrySeq|false, generation|false,
--          then the six window values (admissionWindow.lua) }
-- The generation is sent only when the caller does not know it yet (`expected`
-- differs): a reply is smaller on the hot path, and the caller keeps the one it knows.
local function positionReply(status, rank, total, record, now, meta, seq, gen, expected)
  local token, tokenExp = false, false
  if record then token, tokenExp = record.token, record.tokenExp end
  if gen == expected then gen = false end
  return appendWindow({ status, rank, total, token, tokenExp, now, seq, gen }, meta, META_WINDOW_AT)
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
