#!lua
--[[
  Admit: refill the shared token bucket, reap expired tokens, then take members
  from the head of the queue and issue a token to each, all in one step, so a
  member is always either waiting or holding a token.

  KEYS[1] waiting  zset member -> entry sequence
  KEYS[2] tokens   hash member -> token record
  KEYS[3] active   zset member -> token deadline (ms)
  KEYS[4] leases   zset member -> claim lease expiry (ms)
  KEYS[5] meta     hash: gen, bt/bts (the token bucket, lua/includes/bucket.lua), the admission
                   window (lua/includes/admissionWindow.lua), the controls
                   (lua/includes/controls.lua), hm (members taken off the line)
  KEYS[6] admits   zset admit id -> forget-after (ms): recent admit calls
  KEYS[7] seen     hash member -> last sign of life (ms), near the head only
  KEYS[8] entries  zset entry score -> time (ms): entry checkpoints, for the wait of
                   each member admitted (lua/includes/queueFigures.lua)
  KEYS[9] lanes    zset member -> lane score: members who entered with an invite code
                   (lua/includes/lanes.lua); read only while meta ln is set

  ARGV[1] generation the caller knows ('' if none)
  ARGV[2] rate per second   ARGV[3] burst (-1: never set, it follows the rate in force,
          lua/includes/ratesInForce.lua)   ARGV[4] maxActive (-1: no cap): the caller's
          options, used where the controls set none
  ARGV[5] token TTL (ms)    ARGV[6] admission window length (ms)
  ARGV[7] admit id (a repeated id is a re-sent call: it admits nothing, even when
          other instances admitted in between; else it would issue its tokens twice)
  ARGV[8] abandonAfter (ms; -1: never), ARGV[14] holdSilent (ms; -1: none): see
          lua/includes/takeFromHead.lua
  ARGV[9] pickupTimeout (ms; -1: none): a token nobody reads within it is dropped
  ARGV[10] drop horizon (ms; -1: no limit): drops may carry the line across the presence
          head (ratesInForce.lua, from the rate and burst in force read here) no faster
          than once per this time, which is how long a live member there takes to be
          seen (twice its slowest polling interval with jitter, plus a flush); so the drop
          pace follows the controls in force for every instance alike
  ARGV[11] target order latency (ms; -1: fixed admission)  ARGV[12] min rate  ARGV[13]
          max rate (per second): adaptive admission (lua/includes/adaptiveRate.lua),
          unless the controls pin a rate
  ARGV[15..] fresh tokens, one per member that may be admitted: the caller sends
          about as many as it expects to be admittable, not the whole burst

  Returns { expiresAtMs, activeAfter, generation, admittable, heldCount, droppedCount,
  dropped1, ..., member1, ..., memberN, wait1, ..., waitN }; member i got ARGV[14 + i]
  and waited wait i ms (-1: unknown). heldCount: the members this call held. The
  queue's totals and its wait histogram are kept in meta. admittable: how many this
  call could have admitted with enough tokens (bucket, burst, maxActive room and members
  waiting, held ones included, before it); when it exceeds the tokens sent the caller
  may call again for the rest. Or { STATE_LOST }.

  Modes: paused and closed admit nobody, nor does anything before opensAt;
  passthrough admits up to PASSTHROUGH_BATCH a call, without the bucket or maxActive.
  Stock (meta sk, lua/includes/stock.lua): in every mode, the tokens in play after the
  step never exceed the stock left; the step writes sa, the stock left minus them.

  Lanes (meta ln, lua/includes/laneAdmission.lua): the step's places are shared among the
  default lane and the named lanes by their shares, a lane's unused share going to the
  others; each lane's fractional carry is kept in meta lc. The admitted are then in
  the order of their entry sequence across lanes. Without ln nothing of this runs.

  Work: bounded by the members examined (takeFromHead.lua: at most 2n + 1,256, n at most
  10,000; with lanes, 2n + 1,000 + 256 per lane, at most MAX_LANES + 1 lines), the
  tokens reaped and the entry checkpoints passed (at most one a second of entries); a
  few O(log N) commands otherwise.
]]
--- @include "now"
--- @include "tokenRecord"
--- @include "generation"
--- @include "newGeneration"
--- @include "admissionWindow"
--- @include "queueFigures"
--- @include "recordFigures"
--- @include "orderHealth"
--- @include "adaptiveRate"
--- @include "ratesInForce"
--- @include "bucket"
--- @include "reapTokens"
--- @include "lanes"
--- @include "takeFromHead"
--- @include "laneAdmission"
--- @include "pace"

local FIRST_TOKEN = 15
local PASSTHROUGH_BATCH = 2000
local ADMIT_ID_MEMORY_MS = 300000
local expected = ARGV[1]
local rate, burst, maxActive = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local ttl, windowMs, admitId = tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
local abandonAfter, pickupTimeout, dropHorizon = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
local target, minRate, maxRate = tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13])
local holdSilent = tonumber(ARGV[14])
if not (expected and rate and rate > 0 and burst and (burst >= 1 or burst == -1) and maxActive and ttl and ttl > 0
        and windowMs and windowMs > 0 and admitId and admitId ~= '' and abandonAfter and pickupTimeout
        and dropHorizon and (dropHorizon > 0 or dropHorizon == -1)
        and target and minRate and maxRate and (target < 0 or (minRate > 0 and maxRate >= minRate)) and holdSilent) then
  return redis.error_reply('ERR waitgate: bad admit arguments')
end
local now = nowMs()
local expiresAt = now + ttl
local gen = checkGeneration(KEYS[5], expected)
if not gen then return { STATE_LOST } end
if gen == '' then gen = newGeneration(KEYS[5]) end

local active = reapTokens(KEYS[2], KEYS[3], KEYS[4], KEYS[5], now)
redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', now)
if redis.call('ZSCORE', KEYS[6], admitId) then return { int(expiresAt), active, gen, 0, 0, 0 } end

-- meta, by field name: the bucket, the window, the controls, the pre-queue band, the pace.
local fields = { 'bt', 'bts', 'cm', 'co', 'cr', 'cb', 'ca', 'pb', 'sb', 'sk', 'ln', 'lc' }
for _, f in ipairs(WINDOW_FIELDS) do fields[#fields + 1] = f end
for _, f in ipairs(PACE_FIELDS) do fields[#fields + 1] = f end
local values = redis.call('HMGET', KEYS[5], unpack(fields))
local m = {}
for i, f in ipairs(fields) do m[f] = values[i] end

-- The rate in force: the controls' pinned rate, else adaptive admission's, else the
-- caller's; the burst: the controls', else the caller's, else the rate's (never set).
local mode, opensAt = m.cm or 'open', tonumber(m.co)
if tonumber(m.cr) then
  rate = tonumber(m.cr)
elseif target >= 0 then
  rate = adaptiveRate(KEYS[5], now, rate, target, minRate, maxRate)
end
burst = tonumber(m.cb) or (burst == -1 and defaultBurst(rate) or burst)
maxActive = tonumber(m.ca) or maxActive

-- The token bucket (lua/includes/bucket.lua); full: at its burst, for the pace.
local tokens, refilledAt, full = refillBucket(m.bt, m.bts, now, rate, burst)
local whole = math.min(math.floor(tokens + 1e-9), burst)

-- How many the bucket, burst, cap and queue length allow, then how many of those
-- the fresh tokens sent cover.
local waitingBefore = redis.call('ZCARD', KEYS[1])
local lanes, lengths, defaultLength
if m.ln then
  lanes, defaultLength = parseLanes(m.ln), waitingBefore
  lengths = laneLengths(KEYS[9], lanes)
  for i = 1, #lengths do waitingBefore = waitingBefore + lengths[i] end
end
local admittable = math.min(math.floor(tokens + 1e-9), burst, waitingBefore)
if maxActive >= 0 then admittable = math.min(admittable, maxActive - active) end
local passthrough = mode == 'passthrough'
if passthrough then admittable = math.min(waitingBefore, PASSTHROUGH_BATCH) end
local stockLeft = tonumber(m.sk)
if stockLeft then admittable = math.min(admittable, stockLeft - active) end
local standing = mode == 'paused' or mode == 'closed' or (opensAt and now < opensAt)
if standing then admittable = 0 end
admittable = math.max(0, admittable)
local n = math.min(admittable, #ARGV - FIRST_TOKEN + 1)

local tracking = abandonAfter >= 0 and not passthrough
local budget, dropTokens, dropRefilledAt = MAX_DROPS, nil, nil
if tracking and dropHorizon > 0 then
  local dropRate = presenceHead(rate, burst, abandonAfter) * 1000 / dropHorizon
  budget, dropTokens, dropRefilledAt = dropBudget(KEYS[5], now, dropRate)
end
local admitted, admittedScores, dropped, held, carries
if lanes then
  admitted, admittedScores, dropped, held, carries = takeByShares(KEYS[1], KEYS[9], KEYS[7], now, n, lanes, lengths,
    defaultLength, parseCarries(m.lc), tonumber(m.sb) or 0, tracking and abandonAfter or -1, holdSilent, budget)
else
  admitted, admittedScores, dropped, held = takeFromHead(KEYS[1], KEYS[7], now, n,
    tracking and abandonAfter or -1, holdSilent, budget)
end
if dropTokens then
  redis.call('HSET', KEYS[5], 'dt', string.format('%.17g', dropTokens - #dropped), 'dts', int(dropRefilledAt))
end
n = #admitted

local reply = { int(expiresAt), active + n, gen, admittable, held, #dropped }
for i = 1, #dropped do reply[#reply + 1] = dropped[i] end
local waits = waitsOf(KEYS[8], now, admittedScores, tonumber(m.pb), tonumber(m.sb), opensAt)
if n > 0 then
  -- Every record is "<expiresAt>|0||<token>[|<pickupBy>]": format the constant parts once.
  local pickupBy = pickupTimeout >= 0 and math.min(now + pickupTimeout, expiresAt) or 0
  local record = { tokenExp = expiresAt, claimExp = 0, claimId = '', token = '', pickupBy = 0 }
  local prefix = formatRecord(record)
  local suffix = pickupBy > 0 and ('|' .. int(pickupBy)) or ''
  record.pickupBy = pickupBy
  local score = int(deadlineOf(record))
  local recordFields, scores = {}, {}
  for first = 1, n, CHUNK do
    local last = math.min(first + CHUNK - 1, n)
    local f = 0
    for i = first, last do
      local member = admitted[i]
      recordFields[f + 1], recordFields[f + 2] = member, prefix .. ARGV[FIRST_TOKEN - 1 + i] .. suffix
      scores[f + 1], scores[f + 2] = score, member
      f = f + 2
      reply[#reply + 1] = member
    end
    redis.call('HSET', KEYS[2], unpack(recordFields, 1, f))
    redis.call('ZADD', KEYS[3], unpack(scores, 1, f))
  end
  if not passthrough then tokens = tokens - n end
  for i = 1, n do reply[#reply + 1] = waits[i] end
  redis.call('HINCRBY', KEYS[5], 'ta', n)
  local known = {}
  for i = 1, n do if waits[i] >= 0 then known[#known + 1] = waits[i] end end
  recordWaits(KEYS[5], now, known)
end
if #dropped > 0 then redis.call('HINCRBY', KEYS[5], 'ab', #dropped) end
-- Members taken off the line, admitted or dropped, counted in meta hm since the
-- generation began and pushed as "<generation> <hm>" on the channel "<meta key>:moves":
-- every waiting rank just fell by that many, and a position cache that listens
-- (RedisStore subscriber, src/position-cache.ts) knows it at once instead of at its
-- next snapshot. pcall: with an ACL that grants no channel the admission still
-- happens; listeners then hear nothing and estimate from the pace of the head.
if n + #dropped > 0 then
  local moves = redis.call('HINCRBY', KEYS[5], 'hm', n + #dropped)
  redis.pcall('PUBLISH', KEYS[5] .. ':moves', gen .. ' ' .. moves)
  trimEntries(KEYS[8], KEYS[1])
end

local metaFields = bucketFields({}, tokens, refilledAt)
if carries and n > 0 then
  metaFields[#metaFields + 1] = 'lc'
  metaFields[#metaFields + 1] = formatCarries(carries)
end
if stockLeft then
  metaFields[#metaFields + 1] = 'sa'
  metaFields[#metaFields + 1] = int(math.max(0, stockLeft - active - n))
end
if n > 0 then recordAdmissions(metaFields, m, now, n, windowMs) end
-- The pace of the line: every step decays it; a step that left members waiting adds
-- the members it took off the line and the tokens the rate offered since the last step
-- (lua/includes/pace.lua). A step that drained the line shows the demand, not how fast
-- the line can move; paused, closed, before the opening or in passthrough, nor does it.
local lastStepAt = tonumber(m.pz)
local counted = lastStepAt and not passthrough and not standing and waitingBefore > n + #dropped
local pm, pc, pf = nextPace(tonumber(m.pm), tonumber(m.pc), lastStepAt, now,
  counted and n + #dropped or 0, counted and stepOffer(n, whole, full, rate, lastStepAt, now) or 0)
for _, v in ipairs({ 'pm', string.format('%.17g', pm), 'pc', string.format('%.17g', pc), 'pz', int(now) }) do
  metaFields[#metaFields + 1] = v
end
-- Published once the steps counted offered a token's worth (MIN_PACE_EVIDENCE), else none:
-- the estimate then plans with the rate in force alone.
if pc >= MIN_PACE_EVIDENCE then
  metaFields[#metaFields + 1] = 'pf'
  metaFields[#metaFields + 1] = string.format('%.6g', pf)
elseif m.pf then
  redis.call('HDEL', KEYS[5], 'pf')
end
-- The line moved (or had nobody to move): the wait estimate's stall clock restarts.
if n > 0 or #dropped > 0 or waitingBefore == 0 then
  metaFields[#metaFields + 1] = 'mv'
  metaFields[#metaFields + 1] = int(now)
end
redis.call('HSET', KEYS[5], unpack(metaFields))
-- ioredis re-sends a call whose reply was lost once it has reconnected: remember the id.
redis.call('ZADD', KEYS[6], now + ADMIT_ID_MEMORY_MS, admitId)
return reply
