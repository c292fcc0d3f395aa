-- The queue's generation: a random id stored in meta when the queue is first
-- written. Each app instance remembers the one it saw and sends it along; if the
-- queue's state vanished (FLUSHALL, a restart without persistence) or was
-- replaced, they differ and the script refuses to act on the empty state rather
-- than let everyone re-enter as if new: it replies STATE_LOST.
local STATE_LOST = -1

-- The generation ('' while the queue was never written), or nil when the state
-- this caller knew is gone. Reads only.
local function checkGeneration(metaKey, expected)
  local gen = redis.call('HGET', metaKey, 'gen')
  if gen then
    if expected ~= '' and gen ~= expected then return nil end
    return gen
  end
  if expected ~= '' then return nil end
  return ''
end
