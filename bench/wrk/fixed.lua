-- The same request every time (login, /me, a static route): BENCH_BODY as its body. Made in
-- init, once wrk knows the host: HTTP/1.1 servers refuse a request without Host.
dofile(os.getenv("BENCH_DIR") .. "/common.lua")
local body = os.getenv("BENCH_BODY")
if body == "" then body = nil end
local prepared

function init()
  prepared = wrk.format(method, path, headers, body)
end

function request()
  return prepared
end
