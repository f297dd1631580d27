import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Logger, Metric, TestClock } from "effect"
import { protectionsLocal } from "../../application/metrics.js"
import { AttemptCounter } from "../../application/ports/AttemptCounter.js"
import { ProtectionsCounting } from "../../application/ports/ProtectionsCounting.js"
import { RateLimiter } from "../../application/ports/RateLimiter.js"
import * as LocalFallback from "../../infrastructure/redis/LocalFallback.js"
import { type PrivateRedis, privateRedis, redisCommand } from "../support/privateRedis.js"
import { clientLayer, testRedisUrl } from "../support/redis.js"
import { stoppedRedisClient } from "../support/stoppedRedis.js"

/** The lines logged at each level, as text. */
const captured = () => {
  const lines: Array<{ readonly level: string; readonly text: string }> = []
  const logger = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ logLevel, message }) => {
      lines.push({ level: logLevel.label, text: (Array.isArray(message) ? message : [message]).map(String).join(" ") })
    })
  )
  const at = (level: string) => lines.filter((line) => line.level === level).map((line) => line.text)
  return { logger, at }
}

const gauge = Effect.map(Metric.value(protectionsLocal), (state) => state.value)

const twoPerMinute = { limit: 2, window: Duration.minutes(1) }
const lockout = { maxAttempts: 3, duration: Duration.minutes(15) }

const ownRedis = Effect.acquireRelease(
  Effect.promise(async () => {
    const redis = await privateRedis()
    await redis.start()
    return redis
  }),
  (redis) => Effect.promise(redis.remove)
)

/** How many keys of rate limits Redis holds under the test client's prefix. */
const rateLimitKeys = (redis: PrivateRedis) =>
  Effect.promise(async () => {
    const reply = await redisCommand(redis.port, "KEYS", "portcullis-test:*ratelimit:*")
    return Number(reply?.slice(1))
  })

describe.skipIf(testRedisUrl === undefined)("rate limits and lockout over a Redis that goes away", () => {
  it.live(
    "count in Redis while it answers, in this process while it is gone (never failing), and in Redis again once it is back",
    () => {
      const log = captured()
      return Effect.gen(function* () {
        const redis = yield* ownRedis
        const program = Effect.gen(function* () {
          const limiter = yield* RateLimiter
          const counter = yield* AttemptCounter
          const counting = yield* ProtectionsCounting

          expect((yield* limiter.hit("login:a", twoPerMinute)).allowed).toBe(true)
          expect(yield* rateLimitKeys(redis)).toBe(1)
          expect(yield* counting.local).toBe(false)
          expect(yield* gauge).toBe(0)

          yield* Effect.promise(redis.kill)
          // Counted here, so the limit and the lock hold: the third hit is refused, the third attempt locks.
          expect((yield* limiter.hit("login:b", twoPerMinute)).allowed).toBe(true)
          expect((yield* limiter.hit("login:b", twoPerMinute)).allowed).toBe(true)
          expect((yield* limiter.hit("login:b", twoPerMinute)).allowed).toBe(false)
          for (let i = 0; i < 2; i++) yield* counter.attempt("victim", lockout)
          expect(yield* counter.attempt("victim", lockout)).toMatchObject({ _tag: "Counted", locking: true })
          expect((yield* counter.attempt("victim", lockout))._tag).toBe("Locked")
          for (let i = 0; i < 50; i++) yield* limiter.hit(`login:${i}`, twoPerMinute)
          expect(yield* counting.local).toBe(true)
          expect(yield* gauge).toBe(1)
          expect(log.at("ERROR")).toEqual([
            "redis unusable: rate limits and lockout count in each process on its own until it answers again"
          ])

          yield* Effect.promise(redis.start)
          // Tried again in the background, at most two seconds apart.
          for (let i = 0; i < 50 && (yield* counting.local); i++) yield* Effect.sleep("100 millis")
          expect(yield* counting.local).toBe(false)
          expect(yield* gauge).toBe(0)
          expect(log.at("INFO")).toContain("redis usable again: rate limits and lockout count in Redis")
          // Redis came back empty: what was counted meanwhile stays in the process.
          expect((yield* limiter.hit("login:b", twoPerMinute)).allowed).toBe(true)
          expect(yield* rateLimitKeys(redis)).toBe(1)
          expect(log.at("ERROR")).toHaveLength(1)
        })
        yield* program.pipe(Effect.provide(LocalFallback.protections.pipe(Layer.provide(clientLayer(redis.url)))))
      }).pipe(Effect.scoped, Effect.provide(log.logger))
    },
    30_000
  )

  it.effect("one error line a minute while Redis is unusable, however many requests meet it", () => {
    const log = captured()
    return Effect.gen(function* () {
      const limiter = yield* RateLimiter
      const counter = yield* AttemptCounter
      const hits = (n: number) =>
        Effect.forEach(
          Array.from({ length: n }, (_, i) => i),
          (i) => Effect.zipRight(limiter.hit(`login:${i}`, twoPerMinute), counter.attempt(`user-${i}`, lockout)),
          { discard: true }
        )
      yield* hits(100)
      expect(log.at("ERROR")).toHaveLength(1)
      yield* TestClock.adjust("59 seconds")
      yield* hits(100)
      expect(log.at("ERROR")).toHaveLength(1)
      yield* TestClock.adjust("1 second")
      yield* hits(100)
      expect(log.at("ERROR")).toHaveLength(2)
    }).pipe(
      Effect.provide(LocalFallback.protections.pipe(Layer.provide(stoppedRedisClient))),
      Effect.provide(log.logger)
    )
  })
})
