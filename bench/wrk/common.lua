-- Shared by every script: the route from BENCH_METHOD/BENCH_PATH, extra headers from
-- BENCH_HEADERS ("name: value" lines), and a JSON summary line that run.mjs reads.
method = os.getenv("BENCH_METHOD") or "GET"
path = os.getenv("BENCH_PATH") or "/"
headers = { ["Content-Type"] = "application/json" }
for line in (os.getenv("BENCH_HEADERS") or ""):gmatch("[^\n]+") do
  local name, value = line:match("^([^:]+):%s*(.*)$")
  if name then headers[name] = value end
end

function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    errors.connect, errors.read, errors.write, errors.status, errors.timeout))
end
