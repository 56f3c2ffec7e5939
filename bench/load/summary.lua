-- The summary every wrk script of bench/load prints, in the lines bench/load/harness.py
-- and bench/report.py parse. Loaded with dofile() by the scripts next to it; each thread's
-- script keeps a global `non2xx` count, read here with thread:get.
local summary = {}

function summary.print(threads, totals, latency)
  local non2xx = 0
  for _, thread in ipairs(threads) do non2xx = non2xx + thread:get("non2xx") end
  local errors = totals.errors
  local seconds = totals.duration / 1e6
  io.write(string.format("requests:      %d in %.2f s\n", totals.requests, seconds))
  io.write(string.format("requests/s:    %.0f\n", totals.requests / seconds))
  io.write(string.format("latency p50:   %.0f us\n", latency:percentile(50)))
  io.write(string.format("latency p99:   %.0f us\n", latency:percentile(99)))
  io.write(string.format("socket errors: connect %d, read %d, write %d, timeout %d\n",
                         errors.connect, errors.read, errors.write, errors.timeout))
  io.write(string.format("non-2xx:       %d\n", non2xx))
end

return summary
