-- The login flood: sign-ins with addresses never used before (register.lua's bodies), as a
-- credential-stuffing run would send them: each costs a hash (an unknown address is verified
-- against a decoy) and none reaches the lockout's limit, so the hashing queue's bound is what
-- answers the excess. Every answer's status is counted, so that the run tells the queue's 503s
-- from the 401s of the attempts that were hashed.
dofile(os.getenv("BENCH_DIR") .. "/register.lua")

local threads = {}
-- A global, so that done() can read each thread's own through thread:get.
statuses = {}

local numberThread = setup

function setup(thread)
  numberThread(thread)
  table.insert(threads, thread)
end

function response(status)
  statuses[status] = (statuses[status] or 0) + 1
end

local summarise = done

function done(summary, latency, requests)
  summarise(summary, latency, requests)
  local totals = {}
  for _, thread in ipairs(threads) do
    for status, count in pairs(thread:get("statuses")) do
      totals[status] = (totals[status] or 0) + count
    end
  end
  local fields = {}
  for status, count in pairs(totals) do
    table.insert(fields, string.format('"%d":%d', status, count))
  end
  io.write("BENCH_STATUSES {" .. table.concat(fields, ",") .. "}\n")
end
