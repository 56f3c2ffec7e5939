-- wrk script: replays a request table in order (bench/tables/mix1000.replay, lines of
-- METHOD<TAB>TARGET<TAB>ROUTE<TAB>BODY), each thread from its own offset and round-robin
-- from there, so every run sends the same sequence. wrk's Lua sees threads, not
-- connections: a thread's connections take turns on the thread's one sequence. Requests
-- with a body carry Content-Type: application/json. With `reads`, only the GET lines. With
-- `hex`, the bodies are hexadecimal (binary ones: codec_replay.py's CBOR and COSE tables),
-- sent as bytes with the Content-Type and Accept given.
-- usage: wrk ... -s replay.lua URL -- TABLE [reads | hex CONTENT-TYPE ACCEPT]
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local summary = dofile(here .. "summary.lua")
local threads = {}
local requests = {}
local next_index = 1
non2xx = 0  -- global: done() reads each thread's copy with thread:get
last_non2xx = 0  -- the status of the latest non-2xx answer, to say what went wrong
thread_index = 0  -- set by setup() in each thread's own Lua state

-- Thread k starts k * offset_stride requests into the table (modulo its length), so two
-- threads do not send the same request at the same moment.
local offset_stride = 1031

function setup(thread)
  thread:set("thread_index", #threads)
  table.insert(threads, thread)
end

function init(args)
  local reads_only = args[2] == "reads"
  local hex = args[2] == "hex"
  local json = { ["Content-Type"] = "application/json" }
  if hex then json = { ["Content-Type"] = args[3], ["Accept"] = args[4] } end
  for line in io.lines(args[1]) do
    if line:sub(1, 1) ~= "#" then
      local method, target, _, body = line:match("^([^\t]+)\t([^\t]+)\t([^\t]*)\t?(.*)$")
      if method and (not reads_only or method == "GET") then
        if body == "" then
          table.insert(requests, wrk.format(method, target))
        else
          if hex then
            body = body:gsub("%x%x", function(h) return string.char(tonumber(h, 16)) end)
          end
          table.insert(requests, wrk.format(method, target, json, body))
        end
      end
    end
  end
  if #requests == 0 then error("no requests in " .. args[1]) end
  next_index = (thread_index * offset_stride) % #requests + 1
end

function request()
  local r = requests[next_index]
  next_index = next_index % #requests + 1
  return r
end

function response(status, headers, body)
  if status < 200 or status > 299 then
    non2xx = non2xx + 1
    last_non2xx = status
  end
end

function done(totals, latency, requests)
  summary.print(threads, totals, latency)
  for _, thread in ipairs(threads) do
    local status = thread:get("last_non2xx")
    if status ~= 0 then io.write(string.format("last non-2xx: %d\n", status)) break end
  end
end
