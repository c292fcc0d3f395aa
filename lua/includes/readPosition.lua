-- Position of one member, read-only. The token is looked up before the rank, so
-- an admitted member is READY, never NOT_ENTERED. An expired record that has not
-- been reaped yet reads as absent.
-- Reply: { status (0 NOT_ENTERED | 1 WAITING | 2 READY), rank|false, total,
--          token|false, tokenExpMs|false, nowMs, windowStart, windowCurrent,
--          windowPrevious, windowFirst, entrySeq|false, generation }
local function readPosition(waitingKey, tokensKey, metaKey, member, now, gen)
  local total = redis.call('ZCARD', waitingKey)
  local window = redis.call('HMGET', metaKey, 'ws', 'wc', 'wp', 'wf')
  local status, rank, token, tokenExp, seq = 0, false, false, false, false
  local record = parseRecord(redis.call('HGET', tokensKey, member))
  if record and deadlineOf(record) > now then
    status, token, tokenExp = 2, record.token, record.tokenExp
  else
    local r = redis.call('ZRANK', waitingKey, member)
    if r then status, rank, seq = 1, r, redis.call('ZSCORE', waitingKey, member) end
  end
  return { status, rank, total, token, tokenExp, now,
           window[1], window[2], window[3], window[4], seq, gen }
end
