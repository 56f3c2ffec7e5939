-- wrk script: every request is drawn at random from a file of `METHOD PATH [HOST]` lines
-- (bench/load/requests.py writes one), and done() prints the summary bench/load/run shows.
-- POST, PUT and PATCH carry one 8-field JSON record (examples/records.hpp): a gateway that
-- types its table's writes decodes it, one that echoes them ignores it.
-- usage: wrk ... -s random-requests.lua URL -- REQUESTS_FILE
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local summary = dofile(here .. "summary.lua")
local requests = {}
local record = '{"name":"load","email":"load@example.com","quantity":1,"active":true,'
  .. '"score":0.5,"tags":["a","b"],"region":"eu-west","note":null}'
local writes = { POST = true, PUT = true, PATCH = true }
non2xx = 0  -- global: done() reads each thread's copy with thread:get
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  for line in io.lines(args[1]) do
    local method, path, host = line:match("^(%S+)%s+(%S+)%s*(%S*)$")
    if method then
      local headers = {}
      if host ~= "" then headers.Host = host end
      local body = nil
      if writes[method] then
        headers["Content-Type"] = "application/json"
        body = record
      end
      table.insert(requests, wrk.format(method, path, headers, body))
    end
  end
  if #requests == 0 then error("no requests in " .. args[1]) end
  math.randomseed(#requests)
end

function request()
  return requests[math.random(#requests)]
end

function response(status, headers, body)
  if status < 200 or status > 299 then non2xx = non2xx + 1 end
end

function done(totals, latency, requests)
  summary.print(threads, totals, latency)
end
