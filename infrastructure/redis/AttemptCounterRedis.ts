import { Clock, Duration, Effect, Layer } from "effect"
import { type Attempt, AttemptCounter } from "../../application/ports/AttemptCounter.js"
import { RedisClient, script } from "./RedisClient.js"

/**
 * The memory adapter's rules on a hash { attempts, attemptsUntil, lockedUntil } (epoch ms):
 * refused while locked; otherwise counted, the count starting afresh once `attemptsUntil` has
 * passed; the attempt reaching the maximum locks and resets the count. The key expires when both
 * the attempts and the lock have run out. Answers { 0, retry ms } or { 1, attempts, locking }.
 */
const attempt = script(`
local now = tonumber(ARGV[1])
local duration = tonumber(ARGV[2])
local maxAttempts = tonumber(ARGV[3])
local v = redis.call('HMGET', KEYS[1], 'attempts', 'attemptsUntil', 'lockedUntil')
local attempts = tonumber(v[1]) or 0
local attemptsUntil = tonumber(v[2]) or 0
local lockedUntil = tonumber(v[3]) or 0
if lockedUntil > now then return { 0, lockedUntil - now } end
if attemptsUntil <= now then attempts = 0 end
attempts = attempts + 1
attemptsUntil = now + duration
local counted = attempts
local locking = 0
if attempts >= maxAttempts then
  lockedUntil = now + duration
  attempts = 0
  locking = 1
end
redis.call('HSET', KEYS[1], 'attempts', attempts, 'attemptsUntil', string.format('%.0f', attemptsUntil),
  'lockedUntil', string.format('%.0f', lockedUntil))
redis.call('PEXPIRE', KEYS[1], math.max(1, math.max(attemptsUntil, lockedUntil) - now))
return { 1, counted, locking }
`)

/** Attempts and locks per identifier in a hash `lockout:<identifier>`, one script per attempt. */
export const make = Effect.gen(function* () {
  const client = yield* RedisClient
  const key = (identifier: string) => client.key(`lockout:${identifier}`)
  return AttemptCounter.of({
    attempt: (identifier, rule) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const reply = yield* client.use("lockout attempt", (redis) =>
          attempt(redis, [key(identifier)], [now, Duration.toMillis(rule.duration), rule.maxAttempts])
        )
        const [counted, first, locking] = reply as [number, number, number]
        return counted === 0
          ? ({ _tag: "Locked", retryAfter: Duration.millis(first) } satisfies Attempt)
          : ({ _tag: "Counted", attempts: first, locking: locking === 1 } satisfies Attempt)
      }),
    clear: (identifier) => Effect.asVoid(client.use("lockout clear", (redis) => redis.del(key(identifier))))
  })
})

export const layer = Layer.effect(AttemptCounter, make)
