-- wrk script: every request is drawn at random from a file of `METHOD PATH [HOST]` lines
-- (bench/load/requests.py writes one), and done() prints the summary bench/load/run shows.
-- usage: wrk ... -s random-requests.lua URL -- REQUESTS_FILE
local requests = {}
non2xx = 0  -- global: done() reads each thread's copy with thread:get
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  for line in io.lines(args[1]) do
    local method, path, host = line:match("^(%S+)%s+(%S+)%s*(%S*)$")
    if method then
      local headers = nil
      if host ~= "" then headers = { Host = host } end
      table.insert(requests, wrk.format(method, path, headers))
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

function done(summary, latency, requests)
  local total_non2xx = 0
  for _, thread in ipairs(threads) do total_non2xx = total_non2xx + thread:get("non2xx") end
  local errors = summary.errors
  local seconds = summary.duration / 1e6
  io.write(string.format("requests:      %d in %.2f s\n", summary.requests, seconds))
  io.write(string.format("requests/s:    %.0f\n", summary.requests / seconds))
  io.write(string.format("latency p50:   %.0f us\n", latency:percentile(50)))
  io.write(string.format("latency p99:   %.0f us\n", latency:percentile(99)))
  io.write(string.format("socket errors: connect %d, read %d, write %d, timeout %d\n",
                         errors.connect, errors.read, errors.write, errors.timeout))
  io.write(string.format("non-2xx:       %d\n", total_non2xx))
end
