-- The admission window, kept in meta: two fixed windows read as a sliding one by
-- the caller (src/admission-window.ts), plus what the wait estimate reads.
--   ws  start of the current window (ms)      wc  admissions in it
--   wp  admissions in the window before       wf  when the current run of admissions began
--   wl  when admissions were last recorded (the window is written only then)
--   mv  the last admit that found the line able to move (it admitted someone, or
--       nobody was waiting); since then the line is stalled
--   pf  the pace factor of the line (lua/includes/pace.lua)
-- Every admission counts, also a step that admitted everyone waiting: the window is the
-- rate members were let through at (stats().admittedPerSecond agrees with the totals).
-- Replies carry these values in this order, last in the reply.
local WINDOW_FIELDS = { 'ws', 'wc', 'wp', 'wf', 'wl', 'mv', 'pf' }

-- Appends values[from .. from + #WINDOW_FIELDS - 1] (the window, as HMGET read it) to reply.
local function appendWindow(reply, values, from)
  for i = 0, #WINDOW_FIELDS - 1 do
    reply[#reply + 1] = values[from + i] or false
  end
  return reply
end

-- The window's fields after a step that admitted n members at now, as field/value pairs
-- appended to `out`; w: the window's stored values by field name.
local function recordAdmissions(out, w, now, n, windowMs)
  local ws, wc, wp, wf = tonumber(w.ws) or now, tonumber(w.wc) or 0, tonumber(w.wp) or 0, w.wf
  if now - ws >= 2 * windowMs then
    ws, wc, wp = now, 0, 0
  elseif now - ws >= windowMs then
    ws, wc, wp = ws + windowMs, 0, wc
  end
  if wc == 0 and wp == 0 then wf = int(now) end
  for _, pair in ipairs({ { 'ws', int(ws) }, { 'wc', wc + n }, { 'wp', wp }, { 'wf', wf }, { 'wl', int(now) } }) do
    out[#out + 1] = pair[1]
    out[#out + 1] = pair[2]
  end
end
