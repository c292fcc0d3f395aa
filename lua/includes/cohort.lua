-- An auditable cohort (SPEC §17): each member who takes a place in a shuffled pre-queue
-- is folded into a running hash chain kept in meta, O(1) per entry:
--   kh the chain head (40 hex digits; absent: the empty chain, 40 zeros)
--   kn the chain length (entries folded)
--   k<i> the i-th entry's salted hash (i from 1), for the draw report after the sale
-- The salted hash is SHA-1(<seed hex>:<member id>), the draw's own hash (its first 10 hex
-- digits are the member's draw score, lua/includes/controls.lua), salted by the secret
-- seed until the opening reveals it. The next head is SHA-1(<head hex><salted hash hex>).
-- Nothing is folded after the opening (no member joins the pre-queue then), so the
-- head and length at the opening are the cohort commitment. src/store/memory/cohort.ts
-- computes the same; docs/fair-entry.md states the rule for anyone recomputing it.
local COHORT_EMPTY = '0000000000000000000000000000000000000000'

-- Folds the member into the chain of the queue whose meta is metaKey (seed: the draw seed).
local function foldCohort(metaKey, seed, member)
  local state = redis.call('HMGET', metaKey, 'kh', 'kn')
  local hash = redis.sha1hex(seed .. ':' .. member)
  local n = (tonumber(state[2]) or 0) + 1
  redis.call('HSET', metaKey, 'kh', redis.sha1hex((state[1] or COHORT_EMPTY) .. hash), 'kn', n, 'k' .. n, hash)
end

-- A new draw (a new seed) starts a new chain: the last draw's links are salted with a seed
-- that is no longer this draw's, and its members are not in this pre-queue. O(1): the
-- links k<i> of the last chain stay in meta (each overwritten as the new chain grows; those
-- past its length are never read, lua/cohort-1.lua reads up to kn).
local function restartCohort(metaKey)
  redis.call('HDEL', metaKey, 'kh', 'kn')
end
