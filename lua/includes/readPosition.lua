--- @include "lanes"
-- Position of one member. The token is looked up before the rank, so an admitted
-- member is READY, never NOT_ENTERED. An expired record that has not been reaped
-- yet reads as absent.
--
-- The meta fields a position needs, in one HMGET (needs the admissionWindow and
-- controls includes): [1] gen  [2] seq (last entry sequence)  then the admission
-- window (WINDOW_FIELDS), the controls a position shows (POSITION_CONTROL_FIELDS),
-- sb, cd (draw seed), kt (the last entry checkpoint, queueFigures.lua) and ln (the
-- lanes, lanes.lua: unset for a queue without invite codes, which then pays nothing more)
local META_WINDOW_AT = 3
local META_CONTROLS_AT = META_WINDOW_AT + #WINDOW_FIELDS
local META_SB = META_CONTROLS_AT + #POSITION_CONTROL_FIELDS
local META_SEED, META_KT, META_LN = META_SB + 1, META_SB + 2, META_SB + 3
local function readMeta(metaKey)
  local fields = { 'gen', 'seq' }
  for _, f in ipairs(WINDOW_FIELDS) do fields[#fields + 1] = f end
  for _, f in ipairs(POSITION_CONTROL_FIELDS) do fields[#fields + 1] = f end
  fields[#fields + 1] = 'sb'
  fields[#fields + 1] = 'cd'
  fields[#fields + 1] = 'kt'
  fields[#fields + 1] = 'ln'
  return redis.call('HMGET', metaKey, unpack(fields))
end

-- Reply: { status (0 NOT_ENTERED | 1 WAITING | 2 READY), rank|false, total,
--          token|false, tokenExpMs|false, nowMs, entryScore|false, generation|false,
--          then the window values (admissionWindow.lua), then the controls
--          (controls.lua POSITION_CONTROL_FIELDS) }
-- The generation is sent only when the caller does not know it yet (`expected`
-- differs): a reply is smaller on the hot path, and the caller keeps the one it knows.
-- A batch script sets compactReplies: each member's reply is then only what differs
-- between members, { status, rank|false, total, token|false, tokenExpMs|false,
-- entryScore|false }, and the script sends the rest once (sharedReply).
local compactReplies = false

local function positionReply(status, rank, total, record, now, meta, seq, gen, expected)
  local token, tokenExp = false, false
  if record then token, tokenExp = record.token, record.tokenExp end
  if compactReplies then return { status, rank, total, token, tokenExp, seq } end
  if gen == expected then gen = false end
  local reply = appendWindow({ status, rank, total, token, tokenExp, now, seq, gen }, meta, META_WINDOW_AT)
  for i = 0, #POSITION_CONTROL_FIELDS - 1 do reply[#reply + 1] = meta[META_CONTROLS_AT + i] or false end
  return reply
end

-- What compact member replies leave out, the same for the whole call: { nowMs,
-- generation|false, the window values, the controls }, then only while lanes are
-- stored (meta ln): ln and the members waiting in the lanes (ZCARD lanes), which the
-- caller adds to each member's total (a member's rank and total count its own lane).
-- lanesKey: the `lanes` zset (nil for a script that does not declare it).
local function sharedReply(now, meta, gen, expected, lanesKey)
  local reply = appendWindow({ now, gen ~= expected and gen or false }, meta, META_WINDOW_AT)
  for i = 0, #POSITION_CONTROL_FIELDS - 1 do reply[#reply + 1] = meta[META_CONTROLS_AT + i] or false end
  if lanesKey and meta[META_LN] then
    reply[#reply + 1] = meta[META_LN]
    reply[#reply + 1] = redis.call('ZCARD', lanesKey)
  end
  return reply
end

-- The position of a member whose live token record (or nil) was already read; lanesKey:
-- the `lanes` zset (nil for a script that does not declare it).
local function readPosition(waitingKey, member, record, now, meta, gen, expected, lanesKey)
  local total = redis.call('ZCARD', waitingKey)
  if record then return positionReply(2, false, total, record, now, meta, false, gen, expected) end
  local seq = redis.call('ZSCORE', waitingKey, member)
  if not seq and lanesKey and meta[META_LN] then
    -- A member of a lane: its rank counts the members ahead in its own lane.
    local score = redis.call('ZSCORE', lanesKey, member)
    if score then return positionReply(1, laneRank(lanesKey, score), total, nil, now, meta, score, gen, expected) end
  end
  if not seq then return positionReply(0, false, total, nil, now, meta, false, gen, expected) end
  return positionReply(1, redis.call('ZRANK', waitingKey, member), total, nil, now, meta, seq, gen, expected)
end

-- The member's token record if it is live (its deadline not passed), else nil.
local function liveRecord(tokensKey, member, now)
  local record = parseRecord(redis.call('HGET', tokensKey, member))
  if record and deadlineOf(record) > now then return record end
  return nil
end
