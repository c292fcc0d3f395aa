-- Stock (setControls stock, lua/includes/controls.lua sk sm sa): each consumed token
-- takes a unit; at 0 the queue closes by itself, with the sold-out message as its
-- message, so every waiting member reads it at its next poll (src/store/memory/stock.ts
-- is the same rule).
local SOLD_OUT = 'Sold out' -- src/controls.ts DEFAULT_SOLD_OUT_MESSAGE
local STOCK_ACTOR = 'waitgate:stock' -- the actor of the log entry of a sale that closed itself (src/controls-log.ts)

-- The meta fields (field/value pairs appended to out) that close a sold-out queue:
-- mode closed, the message sm (or SOLD_OUT), and the next version after cv.
local function closeSoldOut(out, sm, cv)
  for _, v in ipairs({ 'cm', 'closed', 'cx', sm or SOLD_OUT, 'cv', tostring((tonumber(cv) or 0) + 1) }) do
    out[#out + 1] = v
  end
  return out
end

-- One unit sold (a consume), given meta sk, sm and cv: the fields to write, as pairs;
-- none without stock (or with none left). sa stays: one unit and one token in play fewer.
local function sellOne(sk, sm, cv)
  local left = tonumber(sk)
  if not left or left <= 0 then return {} end
  local fields = { 'sk', tostring(left - 1) }
  if left == 1 then closeSoldOut(fields, sm, cv) end
  return fields
end
