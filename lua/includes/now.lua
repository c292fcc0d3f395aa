-- Redis server time in epoch milliseconds. Every timestamp comes from here,
-- never from an app clock, so instances with skewed clocks agree.
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Integers as plain decimal strings (tostring could use exponent notation).
local function int(n)
  return string.format('%.0f', n)
end
