-- Refreshes in which every refresh token is used once. Each thread starts from its share of
-- the pre-minted tokens in BENCH_TOKENS (one a line) and reuses nothing: the successor that a
-- 200 answers goes back into its queue. A thread whose queue runs dry sends a token that is
-- refused, which counts as an error, never as a success.
dofile(os.getenv("BENCH_DIR") .. "/common.lua")
local threadIndex = 0
local threads = tonumber(os.getenv("BENCH_THREADS") or "2")
local queue = {}
local head, tail = 1, 0

function setup(thread)
  threadIndex = threadIndex + 1
  thread:set("index", threadIndex)
end

function init()
  local line = 0
  for token in io.lines(os.getenv("BENCH_TOKENS")) do
    if line % threads == index - 1 then
      tail = tail + 1
      queue[tail] = token
    end
    line = line + 1
  end
end

function request()
  local token = "exhausted"
  if head <= tail then
    token = queue[head]
    queue[head] = nil
    head = head + 1
  end
  return wrk.format(method, path, headers, '{"refresh_token":"' .. token .. '"}')
end

function response(status, _, body)
  if status == 200 then
    local successor = body:match('"refresh_token":"([^"]+)"')
    if successor then
      tail = tail + 1
      queue[tail] = successor
    end
  end
end
