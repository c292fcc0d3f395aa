-- The queue's generation: a random id stored in meta when the queue is first
-- written. Each app instance remembers the one it saw and sends it along; if the
-- queue's state vanished (FLUSHALL, a restart without persistence) or was
-- replaced, they differ and the script refuses to act on the empty state rather
-- than let everyone re-enter as if new: it replies STATE_LOST.
local STATE_LOST = -1

-- Given the stored generation (false when absent): the generation ('' while the
-- queue was never written), or nil when the state this caller knew is gone.
local function acceptGeneration(stored, expected)
  if stored then
    if expected ~= '' and stored ~= expected then return nil end
    return stored
  end
  if expected ~= '' then return nil end
  return ''
end

-- The same, reading meta's generation itself. Reads only.
local function checkGeneration(metaKey, expected)
  return acceptGeneration(redis.call('HGET', metaKey, 'gen'), expected)
end
