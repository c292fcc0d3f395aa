-- Writes a fresh generation id: the first write of a queue (see generation.lua).
local function newGeneration(metaKey)
  local t = redis.call('TIME')
  local gen = string.sub(redis.sha1hex(metaKey .. '|' .. t[1] .. '.' .. t[2]), 1, 16)
  redis.call('HSET', metaKey, 'gen', gen)
  return gen
end
