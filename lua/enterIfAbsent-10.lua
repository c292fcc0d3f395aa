#!lua
--[[
  Join the queue unless the member is already waiting or holds a live token, for one
  member or a batch of them (group commit: the enters of one app instance that reach
  the store in the same turn of its event loop; src/store/group-commit.ts). Each
  member is handled as if alone, in the order sent. Idempotent: a repeated call
  (or a re-sent batch) keeps each member's first sequence number, so its rank stays.

  KEYS[1] waiting  zset member -> entry sequence
  KEYS[2] tokens   hash member -> token record
  KEYS[3] active   zset member -> token deadline (ms)
  KEYS[4] leases   zset member -> claim lease expiry (ms)
  KEYS[5] meta     hash: gen, seq, bucket, admission window
  KEYS[6] seen     hash member -> last sign of life (ms), kept only near the head
  KEYS[7] entries  zset entry score -> time (ms): entry checkpoints (lua/includes/queueFigures.lua)
  KEYS[8] identities hash identity -> the members holding its places (lua/includes/identity.lua)
  KEYS[9] lanes    zset member -> lane score: members who entered with an invite code
                   (lua/includes/lanes.lua); read only while meta ln is set or a code is sent
  KEYS[10] codes   hash code -> "<lane>|<uses left>" (lua/includes/lanes.lua)

  ARGV[1] generation the caller knows ('' if none)
  ARGV[2] presence head of the batch ('' for none): a waiting member whose rank is below it
          has its sign of life recorded in seen (abandonAfterSeconds); further back,
          nothing is written (the work follows the head of the line, not the crowd)
          With the safety net, 'head|option|rate|burst|maxActive' (lua/includes/safetyNet.lua):
          a new member who sent a token is let in at once while nobody waits and the bucket,
          maxActive and the stock allow (READY, joined), else joins the line
  Then two values per member, at most MAX_BATCH (256) members (ARGV[3..4] for the
  first, ARGV[5..6] for the second, ...):
  ARGV[3] member id (validated by the caller)
  ARGV[4] not after (Redis ms; '' for no limit): the caller stopped waiting then and was told
          the outcome is unknown. A call that arrives later (re-sent by ioredis, held in a
          Cluster failover retry) writes nothing: meanwhile the member may have entered again,
          been admitted and ordered, and a late enter would queue them for a second admission.
          A member with a token or a presence head of its own sends instead
          'notAfter|ttl|head|token': the token's TTL (ms), its presence head ('' for none)
          instead of ARGV[2], and a fresh token (the rest of the value), issued at once to a
          new member in passthrough mode.
          A member entering under an identity (one place per identity, SPEC §17) sends
          '@identity|max|' before either: the identity's hash (base64url) and its limit of
          places (1..100).
          A member with an invite code sends '#code|' before that value (after any identity) (a code is
          1-64 of A-Z a-z 0-9 . _ -, src/lanes.ts). A new member (neither waiting in any lane nor holding a live token)
          joins the code's lane and spends one use of the code in the same step; a member
          already placed keeps its place and the code is neither checked nor spent (a reload
          of the page with the code spends nothing); an unknown or spent code: CODE_INVALID,
          nothing written. Passthrough or the safety net let a code's member in without
          spending the code.

  Returns { STATE_LOST } (for the whole batch: the queue's generation is not the one
  the caller knows), or { shared, offset, reply1, reply2, ... }: shared is what every
  member's answer has in common, sent once (sharedReply in lua/includes/readPosition.lua:
  now, generation, window, controls), then one reply per member, in the order sent: for a
  member the batch path joined, the lean reply, a bare number: the total waiting once it
  joined (it is last: rank total - 1; entry score total + offset, offset the same for the
  call, false when no reply is lean); otherwise the compact positionReply
  (lua/includes/readPosition.lua) after the call, with a trailing 1 when this call
  joined the member (or let it through in passthrough), or { QUEUE_CLOSED, message }
  (a new member while closed), { NEED_TOKEN } (a new member in passthrough, and no
  token sent), { LATE } (arrived after its deadline: nothing written for it),
  { BAD_ARGUMENTS } (an empty member id or a malformed value: nothing written for it),
  { IDENTITY_LIMIT } (a new member whose identity's other members hold its limit of
  places: nothing written for it), { CODE_INVALID } (an unknown or spent invite code:
  nothing written for it).
  One member's LATE or BAD_ARGUMENTS leaves the others' results as if it were absent.
  An error reply when ARGV is not a whole number of members, or when every member is
  late (a lone late enter, as before batches: Redis counts the refusal in errorstats).
  A new member joins the pre-queue while now < opensAt (lua/includes/controls.lua).
  A member joining a shuffled pre-queue is folded into the cohort chain (lua/includes/cohort.lua).

  This is the hot path of a flash crowd's first second, so it reads each thing
  once: per call TIME, HMGET meta, and for the members who joined one HSET seq and one
  HINCRBY (the entered total); at most once a second a checkpoint (ZADD, HSET). A lone
  enter: HGET tokens, ZADD NX, ZCARD. A batch (two or more members on time): one HMGET
  tokens and one ZMSCORE waiting for all its members, then for the brand-new ones (no
  token record, not waiting) one ZADD NX of all their places, one HSET seen of their
  signs of life and ZCARD once, so such a member costs no call of its own. A member
  already waiting costs a ZRANK; one with a token record, one let through in passthrough,
  a drawn pre-queue place, a member with an identity or a code, every member while lanes
  are stored (meta ln), or a member met a second time in the batch is entered as alone
  (what a lone enter costs, plus ZSCORE lanes while lanes are stored). An identity adds a
  ZSCORE, an HGET and the check of its recorded members (three calls each at most, at most
  its limit of them), and for a new place an HSET and the look at one other identity
  (lua/includes/identity.lua). The work is bounded by the batch (MAX_BATCH) and the limit
  of places per identity.
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
--- @include "ratesInForce"
--- @include "bucket"
--- @include "safetyNet"
--- @include "cohort"
--- @include "identity"
--- @include "codes"

local LATE, BAD_ARGUMENTS, CODE_INVALID = -4, -5, -7 -- IDENTITY_LIMIT: -6 (identity.lua)
local MAX_BATCH, PER_MEMBER = 256, 2
local argv = ARGV
local expected, batchHead, net = argv[1], netArgument(argv[2])
local count = (#argv - 2) / PER_MEMBER
if not batchHead or count < 1 or count > MAX_BATCH or count ~= math.floor(count) then
  return redis.error_reply('ERR waitgate: bad enter arguments')
end
local now = nowMs()
local meta = readMeta(KEYS[5])
local gen = acceptGeneration(meta[1], expected)
if not gen then return { STATE_LOST } end
local lanesOn = meta[META_LN]
local lanes = parseLanes(meta[META_LN])
local C = META_CONTROLS_AT
local mode = meta[C] or 'open'
local opensAt = tonumber(meta[C + 2])
local beforeOpening = opensAt and now < opensAt
-- Passthrough lets new members through at once, except with stock: then they join the
-- line, and admission steps keep the tokens in play within the stock left.
local letThrough = mode == 'passthrough' and not beforeOpening and not meta[C + 8]
local drawn = meta[C + 3] == '1'
-- The safety net may let a new member in at once (mode open, after any opening).
local netOpen = mode == 'open' and not beforeOpening and netOn(net, meta[C + 10])
local sb = tonumber(meta[META_SB]) or 0
local joined = 0 -- members who took a new place in the line
local waitingCount -- ZCARD of waiting once read: only joins change it in this script

-- The batch path defers its writes to waiting and seen: new places (score, member, ...)
-- for one ZADD, signs of life (member, now, ...) for one HSET. flush() writes them before
-- anything reads those keys again, so every read sees what members before it wrote.
local joins, nJoins, seenArgs, nSeen = {}, 0, {}, 0
local function flush()
  if nJoins > 0 then
    redis.call('ZADD', KEYS[1], 'NX', unpack(joins, 1, nJoins))
    nJoins = 0
  end
  if nSeen > 0 then
    redis.call('HSET', KEYS[6], unpack(seenArgs, 1, nSeen))
    nSeen = 0
  end
end

-- A new member let in at once (passthrough or the safety net), its reply READY and joined.
local function letIn(member, freshToken, ttl)
  local issued = issueAtOnce(KEYS[2], KEYS[3], KEYS[5], member, freshToken, ttl, now)
  local reply = readPosition(KEYS[1], member, issued, now, meta, gen, expected, KEYS[9])
  reply[#reply + 1] = 1
  return reply
end

-- A waiting member near the head: its enter is a sign of life.
local function present(reply, member, presenceHead)
  if presenceHead and reply[2] and reply[2] < presenceHead then redis.call('HSET', KEYS[6], member, now) end
  return reply
end

-- A member with a code who is neither waiting (in any lane) nor holding a live token:
-- the code's lane index, or false for a code that gives no place. Reads only.
local function codeLaneFor(member, code, raw)
  local record = parseRecord(raw)
  if record and deadlineOf(record) > now then return nil end
  if redis.call('ZSCORE', KEYS[1], member) or redis.call('ZSCORE', KEYS[9], member) then return nil end
  return codeLane(KEYS[10], lanes, code) or false
end

-- One member's enter, as the single-member script did it: every read live, every write at
-- once. raw: its tokens field if already read (false for none), else nil. identity: its
-- identity's hash (nil for none), with maxPlaces, the identity's limit of places. code: its
-- invite code, or nil.
local function enterOne(member, notAfter, freshToken, ttl, presenceHead, raw, identity, maxPlaces, code)
  if notAfter and now > notAfter then return { LATE } end
  if raw == nil then raw = redis.call('HGET', KEYS[2], member) end
  -- The code is judged before anything is written (the generation included).
  local laneIndex = code and codeLaneFor(member, code, raw)
  if laneIndex == false then return { CODE_INVALID } end
  if gen == '' then gen = newGeneration(KEYS[5]) end

  local record = parseRecord(raw)
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
    return readPosition(KEYS[1], member, record, now, meta, gen, expected, KEYS[9])
  end
  if lanesOn and not laneIndex and redis.call('ZSCORE', KEYS[9], member) then
    return present(readPosition(KEYS[1], member, nil, now, meta, gen, expected, KEYS[9]), member, presenceHead)
  end
  if mode ~= 'open' or identity then
    -- Closed, passthrough and an identity's limit treat a new member differently: find out
    -- first whether it waits.
    if redis.call('ZSCORE', KEYS[1], member) then return present(readPosition(KEYS[1], member, nil, now, meta, gen, expected, KEYS[9]), member, presenceHead) end
    if mode == 'closed' then return { QUEUE_CLOSED, meta[C + 1] or false } end
    if letThrough and (freshToken == '' or not ttl or ttl <= 0) then return { NEED_TOKEN } end
  end
  -- One place per identity: refused before anything is written. Past this check every path
  -- takes a place (let through, let in by the safety net, or a place in the line).
  if identity then
    local live = placesOf(KEYS[8], KEYS[1], KEYS[9], KEYS[2], identity, member, now)
    if #live >= maxPlaces then return { IDENTITY_LIMIT } end
    recordPlace(KEYS[8], KEYS[1], KEYS[9], KEYS[2], identity, live, member, now)
  end
  -- Passthrough lets a new member through, except before a scheduled opening: then it
  -- joins the pre-queue like everyone before it (nobody jumps the early arrivals).
  -- Let through at once: a token, as admission would issue it, without the bucket or maxActive.
  if letThrough then return letIn(member, freshToken, ttl) end
  -- The safety net: nobody waiting, and the bucket, maxActive and stock allow (safetyNet.lua).
  if netOpen and freshToken ~= '' and ttl and ttl > 0 then
    waitingCount = waitingCount or redis.call('ZCARD', KEYS[1])
    if waitingCount == 0 and netTakes(KEYS[5], KEYS[3], now, net, meta[C + 5], meta[C + 7], meta[C + 8]) then return letIn(member, freshToken, ttl) end
  end
  local seq = (tonumber(meta[2]) or 0) + 1
  if laneIndex then
    -- Into the code's lane, at its back, and one use of the code spent, in this one step.
    local laneScore = laneIndex * LANE_SPAN + seq
    redis.call('ZADD', KEYS[9], laneScore, member)
    spendCode(KEYS[10], KEYS[5], code, laneIndex)
    meta[2] = seq
    joined = joined + 1
    -- Its entry checkpoint in the default lane's scores, which follow the sequence too.
    if not (beforeOpening and meta[C + 4]) and noteEntry(KEYS[7], KEYS[5], now, sb + seq, tonumber(meta[META_KT])) then meta[META_KT] = now end
    waitingCount = waitingCount or redis.call('ZCARD', KEYS[1])
    local reply = present(positionReply(1, laneRank(KEYS[9], laneScore), waitingCount, nil, now, meta, laneScore, gen, expected), member, presenceHead)
    reply[#reply + 1] = 1
    return reply
  end
  -- NX: a member already waiting keeps its first score (and the candidate is not used).
  local score = entryScore(now, seq, opensAt, meta[C + 3], tonumber(meta[C + 4]), sb, meta[META_SEED], member)
  if redis.call('ZADD', KEYS[1], 'NX', score, member) == 0 then
    return present(readPosition(KEYS[1], member, nil, now, meta, gen, expected, KEYS[9]), member, presenceHead)
  end
  meta[2] = seq -- the next member of the batch takes the next sequence number
  joined = joined + 1
  if beforeOpening and drawn and meta[C + 4] and meta[META_SEED] then foldCohort(KEYS[5], meta[META_SEED], member) end
  -- A pre-queue place waits from the opening; any other from its entry checkpoint.
  if not (beforeOpening and meta[C + 4]) and noteEntry(KEYS[7], KEYS[5], now, score, tonumber(meta[META_KT])) then meta[META_KT] = now end
  waitingCount = waitingCount and waitingCount + 1 or redis.call('ZCARD', KEYS[1])
  local total = waitingCount
  -- A new entry scores above everyone (sb + seq, or pb + seq in a FIFO pre-queue), so it is
  -- last; only a drawn pre-queue place needs ZRANK.
  local rank = total - 1
  if drawn and score < sb then rank = redis.call('ZRANK', KEYS[1], member) end
  local reply = present(positionReply(1, rank, total, nil, now, meta, score, gen, expected), member, presenceHead)
  reply[#reply + 1] = 1
  return reply
end

-- Each member's arguments, checked before any write: kinds[i] is BAD_ARGUMENTS, LATE
-- or false (to enter), limits[i] its deadline (false for none), heads[i] its presence head
-- (false for none); tokens[i] and ttls[i] only for a member that sent them, identities[i]
-- and maxPlaces[i] only for a member with an identity. Flat arrays, not a table per
-- member: this runs for every member of every batch.
local find, sub = string.find, string.sub
local sharedHead = tonumber(batchHead)
local ids, kinds, limits, heads, tokens, ttls, codes, onTime, bad = {}, {}, {}, {}, {}, {}, {}, 0, 0
local identities, maxPlaces = {}, {}
for i = 1, count do
  local at = i * PER_MEMBER + 1 -- ARGV[3] for the first member
  local member, notAfter = argv[at], argv[at + 1]
  local head, malformed, badCode = sharedHead, batchHead ~= '' and not sharedHead, false
  if sub(notAfter, 1, 1) == '@' then
    -- '@identity|max|' first: the member enters under an identity.
    local bar1 = find(notAfter, '|', 2, true)
    local bar2 = bar1 and find(notAfter, '|', bar1 + 1, true)
    local max = bar2 and tonumber(sub(notAfter, bar1 + 1, bar2 - 1))
    if max and bar1 > 2 and max >= 1 and max <= 100 and max == math.floor(max) then
      identities[i], maxPlaces[i] = sub(notAfter, 2, bar1 - 1), max
      notAfter = sub(notAfter, bar2 + 1)
    else
      malformed = true
    end
  end
  if sub(notAfter, 1, 1) == '#' then
    -- '#code|' then the value as without a code
    local bar0 = find(notAfter, '|', 2, true)
    codes[i] = sub(notAfter, 2, (bar0 or 1) - 1)
    badCode = not bar0 or codes[i] == ''
    notAfter = bar0 and sub(notAfter, bar0 + 1) or ''
  end
  local bar = find(notAfter, '|', 1, true)
  if bar then
    -- 'notAfter|ttl|head|token'
    local bar2 = find(notAfter, '|', bar + 1, true)
    local bar3 = bar2 and find(notAfter, '|', bar2 + 1, true)
    if bar3 then
      local ttl, presenceHead = sub(notAfter, bar + 1, bar2 - 1), sub(notAfter, bar2 + 1, bar3 - 1)
      head = tonumber(presenceHead)
      malformed = malformed or (ttl ~= '' and not tonumber(ttl)) or (presenceHead ~= '' and not head)
      tokens[i], ttls[i] = sub(notAfter, bar3 + 1), tonumber(ttl)
    else
      malformed = true
    end
    notAfter = sub(notAfter, 1, bar - 1)
  end
  local limit = tonumber(notAfter)
  local kind = false
  if member == '' or malformed or badCode or (notAfter ~= '' and not limit) then
    kind, bad = BAD_ARGUMENTS, bad + 1
  elseif limit and now > limit then
    kind = LATE
  else
    onTime = onTime + 1
  end
  ids[i], kinds[i], limits[i], heads[i] = member, kind, limit or false, head or false
end
-- Every member late (a lone enter, or a whole batch held in a client's offline queue): an
-- error reply, as a refusal Redis counts (errorstats), and nothing written.
if onTime == 0 and bad == 0 then return redis.error_reply('ERR waitgate: enter arrived after its deadline; nothing written') end

compactReplies = true
-- [1]: the shared part, once every member is done; [2]: the offset of the lean replies
-- (false while there is none); then one reply per member.
local replies = { false, false }
local offset

-- The member's enter the single-member way (enterOne), after the batch's deferred writes.
local function enterAlone(i, raw)
  flush()
  return enterOne(ids[i], limits[i] or nil, tokens[i] or '', ttls[i], heads[i] or nil, raw, identities[i], maxPlaces[i], codes[i])
end

-- Lanes stored, or a code sent: each member as alone (a member may wait in a lane).
if onTime < 2 or lanesOn or next(codes) then
  -- A lone enter: the reads of the batch path would only add calls.
  for i = 1, count do replies[i + 2] = kinds[i] and { kinds[i] } or enterAlone(i) end
else
  -- The batch path: one HMGET tokens and one ZMSCORE waiting for every member, so a brand-new
  -- member (no token record, not waiting) costs no call of its own; its place is written
  -- with the others' in one ZADD. Anything else (a token record, an identity, a passthrough
  -- or drawn place) goes through enterOne. A member seen earlier in this batch does too: what was
  -- read for it up front may be stale by then.
  local records = redis.call('HMGET', KEYS[2], unpack(ids))
  local scores = redis.call('ZMSCORE', KEYS[1], unpack(ids))
  local handled = {} -- members already entered by this call
  local pb = tonumber(meta[C + 4])
  -- A pre-queue place waits from the opening; any other from its entry checkpoint. now is
  -- the same for the whole call, so once one join has asked noteEntry, the rest need not.
  local checkpointed = not (beforeOpening and meta[C + 4])
  for i = 1, count do
    local kind, member = kinds[i], ids[i]
    if kind then
      replies[i + 2] = { kind }
    elseif handled[member] then
      replies[i + 2] = enterAlone(i) -- read again: an earlier occurrence may have changed it
    elseif records[i] or identities[i] then
      handled[member] = true
      replies[i + 2] = enterAlone(i, records[i])
    else
      handled[member] = true
      if gen == '' then gen = newGeneration(KEYS[5]) end
      local waitingScore = scores[i]
      if waitingScore then
        -- Waiting already (in any mode): the reply of readPosition, its ZSCORE read up front.
        flush() -- its rank counts the places written before it
        waitingCount = waitingCount or redis.call('ZCARD', KEYS[1])
        replies[i + 2] = present(positionReply(1, redis.call('ZRANK', KEYS[1], member), waitingCount, nil, now, meta, waitingScore, gen, expected), member, heads[i])
      elseif mode == 'closed' then
        replies[i + 2] = { QUEUE_CLOSED, meta[C + 1] or false }
      elseif letThrough or (netOpen and tokens[i] and (waitingCount or redis.call('ZCARD', KEYS[1])) == 0) then
        replies[i + 2] = enterAlone(i, false)
      else
        local seq = (tonumber(meta[2]) or 0) + 1
        local score = beforeOpening and pb and entryScore(now, seq, opensAt, meta[C + 3], pb, sb, meta[META_SEED], member) or sb + seq
        if drawn and score < sb then
          replies[i + 2] = enterAlone(i, false) -- a drawn pre-queue place: its rank needs ZRANK
        else
          joins[nJoins + 1], joins[nJoins + 2], nJoins = score, member, nJoins + 2
          meta[2] = seq
          joined = joined + 1
          if checkpointed then
            if noteEntry(KEYS[7], KEYS[5], now, score, tonumber(meta[META_KT])) then meta[META_KT] = now end
            checkpointed = false
          end
          -- Last in line (see enterOne): rank total - 1, with the places not yet written counted.
          waitingCount = (waitingCount or redis.call('ZCARD', KEYS[1])) + 1
          local head = heads[i]
          if head and waitingCount - 1 < head then seenArgs[nSeen + 1], seenArgs[nSeen + 2], nSeen = member, now, nSeen + 2 end
          -- The lean reply: the bare total (rank total - 1, entry score total + offset, joined),
          -- no table. Every join adds one to seq and to the total, so score - total is the
          -- same for the call's joins; a place that breaks the rule gets the compact table.
          offset = offset or score - waitingCount
          if score - waitingCount == offset then
            replies[i + 2] = waitingCount
          else
            -- positionReply's compact layout (lua/includes/readPosition.lua), then 1: joined.
            replies[i + 2] = { 1, waitingCount - 1, waitingCount, false, false, score, 1 }
          end
        end
      end
    end
  end
  flush()
end
if joined > 0 then
  redis.call('HSET', KEYS[5], 'seq', meta[2])
  redis.call('HINCRBY', KEYS[5], 'te', joined)
end
replies[1] = sharedReply(now, meta, gen, expected, KEYS[9])
replies[2] = offset or false
return replies
