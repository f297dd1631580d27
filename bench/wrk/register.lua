-- Registrations of addresses never used before: each thread numbers its own under a prefix
-- unique to the run. BENCH_EXTRA adds fields to the body (better-auth wants a name).
dofile(os.getenv("BENCH_DIR") .. "/common.lua")
local extraFields = os.getenv("BENCH_EXTRA") or ""
local threadIndex = 0
local counter = 0
local prefix = ""

function setup(thread)
  threadIndex = threadIndex + 1
  thread:set("index", threadIndex)
end

function init()
  prefix = string.format("%s-%d", os.getenv("BENCH_RUN") or "run", index)
end

function request()
  counter = counter + 1
  local body = string.format('{"email":"b-%s-%d@bench.example","password":"correct horse battery staple"%s}',
    prefix, counter, extraFields)
  return wrk.format(method, path, headers, body)
end
