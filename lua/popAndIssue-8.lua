#!lua
--[[
  Admit: refill the shared token bucket, reap expired tokens, then take members
  from the head of the queue and issue a token to each, all in one step, so a
  member is always either waiting or holding a token.

  KEYS[1] waiting  zset member -> entry sequence
  KEYS[2] tokens   hash member -> token record
  KEYS[3] active   zset member -> token deadline (ms)
  KEYS[4] leases   zset member -> claim lease expiry (ms)
  KEYS[5] meta     hash: gen, bt/bts (bucket tokens, refill time), the admission
                   window (lua/includes/admissionWindow.lua), the controls
                   (lua/includes/controls.lua), hm (members taken off the line)
  KEYS[6] admits   zset admit id -> forget-after (ms): recent admit calls
  KEYS[7] seen     hash member -> last sign of life (ms), near the head only
  KEYS[8] entries  zset entry score -> time (ms): entry checkpoints, for the wait of
                   each member admitted (lua/includes/queueFigures.lua)

  ARGV[1] generation the caller knows ('' if none)
  ARGV[2] rate per second   ARGV[3] burst    ARGV[4] maxActive (-1: no cap): the
          caller's options, used where the controls set none
  ARGV[5] token TTL (ms)    ARGV[6] admission window length (ms)
  ARGV[7] admit id (a repeated id is a re-sent call: it admits nothing, even when
          other instances admitted in between; else it would issue its tokens twice)
  ARGV[8] abandonAfter (ms; -1: never): a member met at the head whose last sign of
          life (seen) is older, or who has none, is dropped instead of admitted: no
          token, no bucket, no maxActive place; the next members are taken in its stead
          (at most MAX_DROPS dropped a call)
  ARGV[9] pickupTimeout (ms; -1: none): a token nobody reads within it is dropped
  ARGV[10] drops per second (-1: no limit): a bucket in meta (dt/dts, one second's worth)
          shared by every instance, so that drops never move the line faster than a
          live member far back can be seen (see src/waiting-queue.ts, presence head);
          a dead member met with the bucket empty stays in place, and the call stops
          there (FIFO: nobody behind it is admitted first)
  ARGV[11] target order latency (ms; -1: fixed admission)  ARGV[12] min rate  ARGV[13]
          max rate (per second): adaptive admission. Unless the controls pin a rate, the
          rate in force (meta ar) is evaluated at most once a second from the order
          window (lua/includes/orderHealth.lua): orders failing above FAILURE_SHARE, or
          slower than the target on average, multiply it by DECREASE_ON_FAILURE, or by
          target / latency within [MIN_DECREASE, MAX_DECREASE]; healthy orders make it grow
          by max / INCREASE_STEPS; without orders it holds; always within [min, max] (src/admission-control.ts has the law)
  ARGV[14] holdSilent (ms; -1: none; only with abandonAfter): a member met whose last
          sign of life is older than this but not older than abandonAfter is held: neither
          admitted nor dropped, it keeps its place at the head (its seen entry too) and the
          scan goes on to the next members, at no admission cost; once it calls again it
          is the first admitted. At most MAX_HELD are held a call: beyond them a silent
          member is admitted, as without holding (the line never stalls behind the held)
  ARGV[15..] fresh tokens, one per member that may be admitted: the caller sends
          about as many as it expects to be admittable, not the whole burst

  Returns { expiresAtMs, activeAfter, generation, admittable, heldCount, droppedCount,
  dropped1, ..., member1, ..., memberN, wait1, ..., waitN }; member i got ARGV[14 + i]
  and waited wait i ms (-1: unknown). heldCount: the members this call held (ARGV[14]).
  The queue's totals and its wait histogram are kept in meta. admittable: how many this
  call could have admitted with enough tokens (bucket, burst, maxActive room and members
  waiting, held ones included, before it); when it exceeds the tokens sent the caller
  may call again for the rest. Or { STATE_LOST }.

  Modes: paused and closed admit nobody, nor does anything before opensAt;
  passthrough admits up to PASSTHROUGH_BATCH a call, without the bucket or maxActive.

  The head is read in place, never popped, so that held members keep their place:
  batches of ZRANGE from rank `held` (the members held so far sit before it), then ZREM
  of the batch's admitted and dropped. Bound: a call decides on at most n + MAX_DROPS +
  MAX_HELD members (n admitted, with n the least of admittable and the tokens sent;
  MAX_DROPS dropped; MAX_HELD held) and reads at most n more (the rest of the batch
  where it stopped): at most 2n + 1,256 members, however long the line and however
  many held members wait at its head.

  Work: bounded by the members examined (above; n at most 10,000), the tokens reaped
  and the entry checkpoints passed (at most one a second of entries); a few O(log N)
  commands otherwise.
]]
--- @include "now"
--- @include "tokenRecord"
--- @include "generation"
--- @include "newGeneration"
--- @include "admissionWindow"
--- @include "queueFigures"
--- @include "recordFigures"
--- @include "orderHealth"

local FIRST_TOKEN = 15
local FAILURE_SHARE, DECREASE_ON_FAILURE, MIN_DECREASE, MAX_DECREASE, INCREASE_STEPS = 0.1, 0.8, 0.5, 0.9, 25
local EVALUATE_EVERY_MS = 1000
local MAX_DROPS = 1000
local MAX_HELD = 256
local PASSTHROUGH_BATCH = 2000
local ADMIT_ID_MEMORY_MS = 300000
local expected = ARGV[1]
local rate, burst, maxActive = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local ttl, windowMs, admitId = tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
local abandonAfter, pickupTimeout, dropRate = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
local target, minRate, maxRate = tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13])
local holdSilent = tonumber(ARGV[14])
if not (expected and rate and rate > 0 and burst and burst >= 1 and maxActive and ttl and ttl > 0
        and windowMs and windowMs > 0 and admitId and admitId ~= '' and abandonAfter and pickupTimeout and dropRate
        and target and minRate and maxRate and (target < 0 or (minRate > 0 and maxRate >= minRate)) and holdSilent) then
  return redis.error_reply('ERR waitgate: bad admit arguments')
end
local now = nowMs()
local expiresAt = now + ttl
local gen = checkGeneration(KEYS[5], expected)
if not gen then return { STATE_LOST } end
if gen == '' then gen = newGeneration(KEYS[5]) end

-- Reap tokens whose deadline passed, and lapsed leases, before counting.
-- Commands take many members at once, in chunks: unpack() gives at most ~8,000 values
-- (Lua's C stack limit, LUAI_MAXCSTACK), and an admit or a reap can concern 10,000s.
local CHUNK = 500
local expired = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
if #expired > 0 then
  for first = 1, #expired, CHUNK do
    redis.call('HDEL', KEYS[2], unpack(expired, first, math.min(first + CHUNK - 1, #expired)))
  end
  -- Nothing expired means nothing to remove: the same range, read in the same script.
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  redis.call('HINCRBY', KEYS[5], 'tx', #expired)
end
-- A lease that lapsed is an order that neither committed nor rolled back in time: a failure.
local lapsed = redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
if lapsed > 0 then recordOrders(KEYS[5], now, lapsed, lapsed, 0, 0) end
local active = redis.call('ZCARD', KEYS[3])

redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', now)
if redis.call('ZSCORE', KEYS[6], admitId) then return { int(expiresAt), active, gen, 0, 0, 0 } end
-- meta: [1] bt [2] bts [3..8] the window [9..13] cm co cr cb ca [14..15] pb sb [16..17] ar ae
-- [18..26] the order window
local fields = { 'bt', 'bts' }
for _, f in ipairs(WINDOW_FIELDS) do fields[#fields + 1] = f end
for _, f in ipairs({ 'cm', 'co', 'cr', 'cb', 'ca', 'pb', 'sb', 'ar', 'ae' }) do fields[#fields + 1] = f end
for _, f in ipairs(ORDER_FIELDS) do fields[#fields + 1] = f end
local meta = redis.call('HMGET', KEYS[5], unpack(fields))
-- The controls override the caller's options where set.
local mode, opensAt = meta[9] or 'open', tonumber(meta[10])
if target >= 0 and not meta[11] then
  -- Adaptive: the rate in force, evaluated at most once a second by any instance.
  local inForce, evaluatedAt = tonumber(meta[16]), tonumber(meta[17])
  if not inForce then inForce = math.min(maxRate, math.max(minRate, rate)) end
  if not evaluatedAt or now - evaluatedAt >= EVALUATE_EVERY_MS or now < evaluatedAt then
    local orderValues = {}
    for i = 1, #ORDER_FIELDS do orderValues[i] = meta[17 + i] end
    local _, cur, prev = orderWindow(orderValues, now)
    local count, failed, latency, samples = cur[1] + prev[1], cur[2] + prev[2], cur[3] + prev[3], cur[4] + prev[4]
    if count > 0 and failed / count > FAILURE_SHARE then
      inForce = inForce * DECREASE_ON_FAILURE
    elseif samples > 0 and latency / samples > target then
      inForce = inForce * math.max(MIN_DECREASE, math.min(MAX_DECREASE, target / (latency / samples)))
    elseif count > 0 then
      inForce = inForce + maxRate / INCREASE_STEPS
    end -- no orders to judge by: it holds
    inForce = math.min(maxRate, math.max(minRate, inForce))
    redis.call('HSET', KEYS[5], 'ar', string.format('%.17g', inForce), 'ae', int(now))
  end
  rate = inForce
end
rate = tonumber(meta[11]) or rate
burst = tonumber(meta[12]) or burst
maxActive = tonumber(meta[13]) or maxActive

-- Token bucket: a new queue starts full; a clock that stepped back refills nothing.
local tokens, refilledAt = tonumber(meta[1]), tonumber(meta[2])
if not tokens then tokens, refilledAt = burst, now end
if now > refilledAt then
  tokens = math.min(burst, tokens + (now - refilledAt) * rate / 1000)
  refilledAt = now
end

-- How many the bucket, burst, cap and queue length allow, then how many of those
-- the fresh tokens sent cover.
local waitingBefore = redis.call('ZCARD', KEYS[1])
local admittable = math.min(math.floor(tokens + 1e-9), burst, waitingBefore)
if maxActive >= 0 then admittable = math.min(admittable, maxActive - active) end
local passthrough = mode == 'passthrough'
if passthrough then admittable = math.min(waitingBefore, PASSTHROUGH_BATCH) end
if mode == 'paused' or mode == 'closed' or (opensAt and now < opensAt) then admittable = 0 end
admittable = math.max(0, admittable)
local n = math.min(admittable, #ARGV - FIRST_TOKEN + 1)

-- Take members from the head until n live members are found. The dead (silent for
-- abandonAfter, or never seen near the head) are dropped at no cost to the bucket or
-- maxActive; the silent for holdSilent (not yet abandonAfter) are held: left in place.
local admitted, dropped, admittedScores = {}, {}, {}
local tracking = abandonAfter >= 0 and not passthrough
local holding = tracking and holdSilent >= 0
-- The drop bucket: one second's worth of drops, refilled at dropRate (shared by every instance).
local dropBudget = MAX_DROPS
local dropTokens, dropRefilledAt
if tracking and dropRate >= 0 then
  local d = redis.call('HMGET', KEYS[5], 'dt', 'dts')
  local capacity = math.max(1, dropRate)
  dropTokens, dropRefilledAt = tonumber(d[1]) or capacity, tonumber(d[2]) or now
  if now > dropRefilledAt then
    dropTokens = math.min(capacity, dropTokens + (now - dropRefilledAt) * dropRate / 1000)
    dropRefilledAt = now
  end
  dropBudget = math.min(MAX_DROPS, math.floor(dropTokens + 1e-9))
end
-- The held stay at ranks 0 .. held - 1 (the rest of each batch is removed before the
-- next is read), so the next batch starts at rank `held`.
local held = 0
local blocked = false
while #admitted < n and not blocked do
  local batch = redis.call('ZRANGE', KEYS[1], held, held + n - #admitted - 1, 'WITHSCORES')
  if #batch == 0 then break end
  local ids = {}
  for i = 1, #batch, 2 do ids[#ids + 1] = batch[i] end
  local seenAt = {}
  if tracking then
    for first = 1, #ids, CHUNK do
      local values = redis.call('HMGET', KEYS[7], unpack(ids, first, math.min(first + CHUNK - 1, #ids)))
      for i = 1, #values do seenAt[first + i - 1] = tonumber(values[i]) end
    end
  end
  local decided = {}
  for i = 1, #ids do
    local at = seenAt[i]
    if tracking and (not at or now - at > abandonAfter) then
      -- Out of drops: it stays in place, and the call stops there (FIFO).
      if #dropped >= dropBudget then blocked = true break end
      dropped[#dropped + 1] = ids[i]
      decided[#decided + 1] = ids[i]
    elseif holding and held < MAX_HELD and now - at > holdSilent then
      -- Held: left in place, its seen entry kept. Beyond MAX_HELD it is admitted (below),
      -- as without holding: the held at the head never slow the line down.
      held = held + 1
    else
      admitted[#admitted + 1] = ids[i]
      admittedScores[#admittedScores + 1] = batch[2 * i]
      decided[#decided + 1] = ids[i]
    end
  end
  for first = 1, #decided, CHUNK do
    local last = math.min(first + CHUNK - 1, #decided)
    redis.call('ZREM', KEYS[1], unpack(decided, first, last))
    redis.call('HDEL', KEYS[7], unpack(decided, first, last))
  end
end
if dropTokens then
  redis.call('HSET', KEYS[5], 'dt', string.format('%.17g', dropTokens - #dropped), 'dts', int(dropRefilledAt))
end
n = #admitted

local reply = { int(expiresAt), active + n, gen, admittable, held, #dropped }
for i = 1, #dropped do reply[#reply + 1] = dropped[i] end
local waits = waitsOf(KEYS[8], now, admittedScores, tonumber(meta[14]), tonumber(meta[15]), opensAt)
if n > 0 then
  -- Every record is "<expiresAt>|0||<token>[|<pickupBy>]": format the constant parts once.
  local pickupBy = pickupTimeout >= 0 and math.min(now + pickupTimeout, expiresAt) or 0
  local record = { tokenExp = expiresAt, claimExp = 0, claimId = '', token = '', pickupBy = 0 }
  local prefix = formatRecord(record)
  local suffix = pickupBy > 0 and ('|' .. int(pickupBy)) or ''
  record.pickupBy = pickupBy
  local score = int(deadlineOf(record))
  local fields, scores = {}, {}
  for first = 1, n, CHUNK do
    local last = math.min(first + CHUNK - 1, n)
    local f = 0
    for i = first, last do
      local member = admitted[i]
      fields[f + 1], fields[f + 2] = member, prefix .. ARGV[FIRST_TOKEN - 1 + i] .. suffix
      scores[f + 1], scores[f + 2] = score, member
      f = f + 2
      reply[#reply + 1] = member
    end
    redis.call('HSET', KEYS[2], unpack(fields, 1, f))
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
end
if n > 0 or #dropped > 0 then trimEntries(KEYS[8], KEYS[1]) end

-- %.17g keeps the bucket's exact double, as MemoryStore does: both stores admit alike
-- near a whole token.
local metaFields = { 'bt', string.format('%.17g', tokens), 'bts', int(refilledAt) }
local function set(field, value)
  metaFields[#metaFields + 1] = field
  metaFields[#metaFields + 1] = value
end
-- The admission window (two fixed windows, read as a sliding one by the caller) is
-- written only when it records: then `wl` dates it. Only admissions that left
-- members waiting count: a call that drained the queue shows the demand, not the
-- rate the queue can move at.
if n > 0 and waitingBefore > n + #dropped then
  local ws, wc, wp, wf = tonumber(meta[3]) or now, tonumber(meta[4]) or 0, tonumber(meta[5]) or 0, meta[6]
  if now - ws >= 2 * windowMs then
    ws, wc, wp = now, 0, 0
  elseif now - ws >= windowMs then
    ws, wc, wp = ws + windowMs, 0, wc
  end
  if wc == 0 and wp == 0 then wf = int(now) end
  set('ws', int(ws))
  set('wc', wc + n)
  set('wp', wp)
  set('wf', wf)
  set('wl', int(now))
end
-- The line moved (or had nobody to move): the wait estimate's stall clock restarts.
if n > 0 or #dropped > 0 or waitingBefore == 0 then set('mv', int(now)) end
redis.call('HSET', KEYS[5], unpack(metaFields))
-- ioredis re-sends a call whose reply was lost once it has reconnected: remember the id.
redis.call('ZADD', KEYS[6], now + ADMIT_ID_MEMORY_MS, admitId)
return reply
