import { randomBytes } from "node:crypto"
import { Clock, Duration, Effect, Layer } from "effect"
import { RateLimiter } from "../../application/ports/RateLimiter.js"
import { RedisClient, script } from "./RedisClient.js"

/**
 * The sliding log of one key as a sorted set of hits scored by their instant: drops the hits that
 * left the window, counts this one unless the limit is reached, and keeps the key only for as
 * long as a hit in it can count. Answers { allowed, counted hits, oldest counted instant }.
 */
const hit = script(`
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local allowed = 0
if count < limit then
  redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
  count = count + 1
  allowed = 1
end
local oldest = now
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if first[2] then oldest = tonumber(first[2]) end
if count > 0 then redis.call('PEXPIRE', KEYS[1], math.max(1, window)) end
return { allowed, count, oldest }
`)

/**
 * A sliding log per key in a sorted set `ratelimit:<key>`, decided and counted in one script so
 * that workers sharing the key count together. Instants come from Effect's Clock, not Redis'.
 */
export const make = Effect.gen(function* () {
  const client = yield* RedisClient
  return RateLimiter.of({
    hit: (key, rule) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const windowMs = Duration.toMillis(rule.window)
        const member = `${now}-${randomBytes(6).toString("hex")}`
        const reply = yield* client.use("rate limit", (redis) =>
          hit(redis, [client.key(`ratelimit:${key}`)], [now, windowMs, rule.limit, member])
        )
        const [allowed, count, oldest] = reply as [number, number, number]
        return {
          allowed: allowed === 1,
          limit: rule.limit,
          remaining: Math.max(0, rule.limit - count),
          resetAfter: Duration.millis(Math.max(0, oldest + windowMs - now))
        }
      })
  })
})

export const layer = Layer.effect(RateLimiter, make)
