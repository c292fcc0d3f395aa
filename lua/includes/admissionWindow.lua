-- The admission window, kept in meta: two fixed windows read as a sliding one by
-- the caller (src/admission-window.ts), plus two instants for the wait estimate.
--   ws  start of the current window (ms)      wc  admissions in it
--   wp  admissions in the window before       wf  when the current run of admissions began
--   wl  when admissions were last recorded (the window is written only then)
--   mv  the last admit that found the line able to move (it admitted someone, or
--       nobody was waiting); since then the line is stalled
-- Replies carry these six values in this order, last in the reply.
local WINDOW_FIELDS = { 'ws', 'wc', 'wp', 'wf', 'wl', 'mv' }

-- Appends values[from .. from + 5] (the window, as HMGET read it) to reply.
local function appendWindow(reply, values, from)
  for i = 0, #WINDOW_FIELDS - 1 do
    reply[#reply + 1] = values[from + i] or false
  end
  return reply
end
