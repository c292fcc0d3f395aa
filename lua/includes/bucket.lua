-- The admission token bucket, kept in meta:
--   bt the tokens (a double, stored with %.17g so that both stores admit alike near a
--      whole token)   bts when it was last refilled (ms)
-- It refills at the rate in force up to the burst in force (both from the caller,
-- lua/includes/ratesInForce.lua). lua/popAndIssue-9.lua takes its tokens for an admission
-- step, lua/includes/safetyNet.lua one for a member let in at once.
-- The drop bucket (meta dt/dts, lua/includes/takeFromHead.lua) refills the same way.
-- src/store/memory/bucket.ts refillBucket is the same for MemoryStore.
-- Needs the now include (int).

-- The bucket at `now`, refilled at `rate` a second up to `burst`, from its meta fields as
-- read (bt and bts, or dt and dts; nil or false when absent): its tokens, its refill
-- time, and whether it is full (at its burst: a new queue, or the refill reached it), for
-- the pace (lua/includes/pace.lua stepOffer). A new queue starts full; a clock that
-- stepped back (now at or before the refill time) refills nothing. Writes nothing.
local function refillBucket(bt, bts, now, rate, burst)
  local tokens, refilledAt = tonumber(bt), tonumber(bts)
  local full = not tokens
  if not tokens then tokens, refilledAt = burst, now end
  if now > refilledAt then
    local refilled = tokens + (now - refilledAt) * rate / 1000
    full = full or refilled >= burst
    tokens = math.min(burst, refilled)
    refilledAt = now
  end
  return tokens, refilledAt, full
end

-- Appends the bucket's meta fields to `out` (field/value pairs for one HSET): bt with
-- its exact double, bts in whole ms. Returns out.
local function bucketFields(out, tokens, refilledAt)
  local n = #out
  out[n + 1], out[n + 2] = 'bt', string.format('%.17g', tokens)
  out[n + 3], out[n + 4] = 'bts', int(refilledAt)
  return out
end
