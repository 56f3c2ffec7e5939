-- wrk script: GET the path given (default /v1/iam/users/42) on every request, counting
-- the answers that are not 2xx; prints bench/load/summary.lua's lines.
-- usage: wrk ... -s get.lua URL [-- PATH]
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local summary = dofile(here .. "../load/summary.lua")
local threads = {}
non2xx = 0  -- global: done() reads each thread's copy with thread:get
local path = "/v1/iam/users/42"

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  if args[1] then path = args[1] end
end

function request()
  return wrk.format("GET", path)
end

function response(status)
  if status < 200 or status > 299 then non2xx = non2xx + 1 end
end

function done(totals, latency)
  summary.print(threads, totals, latency)
end
