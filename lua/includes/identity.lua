-- One place per identity (SPEC §17). The identities hash maps an identity (a SHA-256 of the
-- app's identity string, src/identity.ts) to the member ids that took places under it,
-- joined by '\n' (never in a member id: it has no control characters). The record is a hint:
-- a recorded member counts only while it still holds a place (waiting in any lane, or a token not past
-- its deadline), checked when the identity enters again, so a member that left, was dropped
-- or whose token expired or was used frees its place without anyone touching the record.
-- A record keeps at most the limit's live members, and the limit is at most
-- MAX_PLACES_PER_IDENTITY (100, src/identity.ts): the work is bounded by it.
local IDENTITY_LIMIT = -6 -- enter of a new member whose identity holds its limit of places: { IDENTITY_LIMIT }

-- Whether member holds a place: waiting (in the default line or an invite lane), or holding a
-- token not past its deadline.
local function holdsPlace(waitingKey, lanesKey, tokensKey, member, now)
  if redis.call('ZSCORE', waitingKey, member) or redis.call('ZSCORE', lanesKey, member) then return true end
  local record = parseRecord(redis.call('HGET', tokensKey, member))
  return record ~= nil and deadlineOf(record) > now
end

-- The members other than member recorded under identity that still hold a place. Reads only.
local function placesOf(identitiesKey, waitingKey, lanesKey, tokensKey, identity, member, now)
  local live = {}
  local raw = redis.call('HGET', identitiesKey, identity)
  if raw then
    for holder in string.gmatch(raw, '[^\n]+') do
      if holder ~= member and holdsPlace(waitingKey, lanesKey, tokensKey, holder, now) then live[#live + 1] = holder end
    end
  end
  return live
end

-- Records member's new place under identity, beside the live ones; then looks at one other
-- identity picked at random and deletes its record if none of its members holds a place any
-- more, so records of identities that left do not pile up in a queue that never resets.
local function recordPlace(identitiesKey, waitingKey, lanesKey, tokensKey, identity, live, member, now)
  live[#live + 1] = member
  redis.call('HSET', identitiesKey, identity, table.concat(live, '\n'))
  local other = redis.call('HRANDFIELD', identitiesKey)
  if other and other ~= identity and #placesOf(identitiesKey, waitingKey, lanesKey, tokensKey, other, '', now) == 0 then
    redis.call('HDEL', identitiesKey, other)
  end
end
