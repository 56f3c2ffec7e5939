-- wrk script: every request a GET of the URL's path (a file for bench/load/files, one route
-- for bench/deploy/run); counts non-2xx answers and prints the shared summary, then the
-- bytes read.
local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)") or "./"
local summary = dofile(here .. "summary.lua")
local threads = {}

non2xx = 0  -- global: done() reads each thread's copy with thread:get

function setup(thread)
  table.insert(threads, thread)
end

function response(status)
  if status < 200 or status > 299 then non2xx = non2xx + 1 end
end

function done(totals, latency)
  summary.print(threads, totals, latency)
  io.write(string.format("bytes:         %d\n", totals.bytes))
end
