import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, TestClock } from "effect"
import { RateLimiter, type RateLimitRule } from "../../application/ports/RateLimiter.js"
import * as RateLimiterMemory from "../../infrastructure/memory/RateLimiterMemory.js"
import * as LocalFallback from "../../infrastructure/redis/LocalFallback.js"
import * as RateLimiterRedis from "../../infrastructure/redis/RateLimiterRedis.js"
import { clientLayer, testRedisUrl } from "../support/redis.js"
import { stoppedRedisClient } from "../support/stoppedRedis.js"

const START = Date.UTC(2032, 1, 2, 3, 4, 5)
const twoPerMinute: RateLimitRule = { limit: 2, window: Duration.minutes(1) }

const allowed = (limiter: typeof RateLimiter.Service, key = "login:203.0.113.9", rule = twoPerMinute) =>
  Effect.map(limiter.hit(key, rule), (decision) => decision.allowed)

/**
 * One contract, run against every adapter; Redis is skipped without TEST_REDIS_URL. Redis expires
 * keys on its own timer, not on the TestClock, so the sweeper test is the memory adapter's own.
 */
const adapters = [
  { name: "RateLimiterMemory", layer: RateLimiterMemory.layer, skip: false, sweeps: true },
  {
    name: "RateLimiterRedis",
    layer: RateLimiterRedis.layer.pipe(Layer.provide(clientLayer())),
    skip: testRedisUrl === undefined,
    sweeps: false
  },
  // The adapter the deployment uses with REDIS_URL: on Redis while it answers, in memory, never
  // failing, while it is unusable.
  {
    name: "RateLimiterRedis falling back to memory, Redis answering",
    layer: LocalFallback.protections.pipe(Layer.provide(clientLayer())),
    skip: testRedisUrl === undefined,
    sweeps: false
  },
  {
    name: "RateLimiterRedis falling back to memory, Redis gone",
    layer: LocalFallback.protections.pipe(Layer.provide(stoppedRedisClient)),
    skip: testRedisUrl === undefined,
    sweeps: false
  }
]

for (const adapter of adapters) {
  /** Each test builds its own limiter (and sweeper) on the TestClock. */
  const withLimiter = <A, E>(body: (limiter: typeof RateLimiter.Service) => Effect.Effect<A, E>) =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      return yield* Effect.flatMap(RateLimiter, body).pipe(Effect.provide(adapter.layer))
    })

  describe.skipIf(adapter.skip)(adapter.name, () => {
    it.effect("allows `limit` hits in the window, counting down, then refuses with the wait until a slot frees", () =>
      withLimiter((limiter) =>
        Effect.gen(function* () {
          const first = yield* limiter.hit("k", twoPerMinute)
          expect(first).toMatchObject({ allowed: true, limit: 2, remaining: 1 })
          expect(Duration.toMillis(first.resetAfter)).toBe(60_000)
          yield* TestClock.adjust("10 seconds")
          const second = yield* limiter.hit("k", twoPerMinute)
          expect(second).toMatchObject({ allowed: true, limit: 2, remaining: 0 })
          expect(Duration.toMillis(second.resetAfter)).toBe(50_000)
          yield* TestClock.adjust("5 seconds")
          const third = yield* limiter.hit("k", twoPerMinute)
          expect(third).toMatchObject({ allowed: false, limit: 2, remaining: 0 })
          expect(Duration.toMillis(third.resetAfter)).toBe(45_000)
        })
      )
    )

    it.effect("refused hits are not counted: the slot frees when the oldest counted hit leaves the window", () =>
      withLimiter((limiter) =>
        Effect.gen(function* () {
          expect(yield* allowed(limiter)).toBe(true) // t=0
          yield* TestClock.adjust("10 seconds")
          expect(yield* allowed(limiter)).toBe(true) // t=10
          for (let i = 0; i < 5; i++) {
            yield* TestClock.adjust("9 seconds")
            expect(yield* allowed(limiter)).toBe(false) // t=19..55, none of them counted
          }
          yield* TestClock.adjust("5 seconds") // t=60: the t=0 hit has left the window
          expect(yield* allowed(limiter)).toBe(true)
          expect(yield* allowed(limiter)).toBe(false)
          yield* TestClock.adjust("10 seconds") // t=70: the t=10 hit has left
          expect(yield* allowed(limiter)).toBe(true)
        })
      )
    )

    it.effect(
      "the window slides: hits stay counted for a full window from their own instant, not to a fixed boundary",
      () =>
        withLimiter((limiter) =>
          Effect.gen(function* () {
            yield* TestClock.adjust("50 seconds")
            expect(yield* allowed(limiter)).toBe(true) // t=50
            yield* TestClock.adjust("5 seconds")
            expect(yield* allowed(limiter)).toBe(true) // t=55
            // A fixed one-minute window would start afresh at t=60; a sliding one still counts both.
            yield* TestClock.adjust("10 seconds")
            expect(yield* allowed(limiter)).toBe(false) // t=65
            yield* TestClock.adjust(Duration.millis(44_999))
            expect(yield* allowed(limiter)).toBe(false) // t=109.999
            yield* TestClock.adjust(Duration.millis(1))
            expect(yield* allowed(limiter)).toBe(true) // t=110: the t=50 hit has left
            expect(yield* allowed(limiter)).toBe(false)
            yield* TestClock.adjust("5 seconds")
            expect(yield* allowed(limiter)).toBe(true) // t=115: the t=55 hit has left
          })
        )
    )

    it.effect("keys are counted apart", () =>
      withLimiter((limiter) =>
        Effect.gen(function* () {
          expect(yield* allowed(limiter, "login:a")).toBe(true)
          expect(yield* allowed(limiter, "login:a")).toBe(true)
          expect(yield* allowed(limiter, "login:a")).toBe(false)
          expect(yield* allowed(limiter, "login:b")).toBe(true)
          expect(yield* allowed(limiter, "register:a")).toBe(true)
        })
      )
    )

    it.effect("each check uses the window it is given", () =>
      withLimiter((limiter) =>
        Effect.gen(function* () {
          const perTenSeconds = { limit: 1, window: Duration.seconds(10) }
          expect(yield* allowed(limiter, "k", perTenSeconds)).toBe(true)
          yield* TestClock.adjust("9 seconds")
          expect(yield* allowed(limiter, "k", perTenSeconds)).toBe(false)
          yield* TestClock.adjust("1 second")
          expect(yield* allowed(limiter, "k", perTenSeconds)).toBe(true)
        })
      )
    )

    it.effect.runIf(adapter.sweeps)(
      "the sweeper drops keys whose hits have all left the window, and keeps live ones",
      () =>
        withLimiter((limiter) =>
          Effect.gen(function* () {
            // A swept key is forgotten; to see whether it was, move the clock back into its window:
            // a key still held refuses again, a swept one starts afresh.
            expect(yield* allowed(limiter, "short", { limit: 1, window: Duration.seconds(10) })).toBe(true)
            expect(yield* allowed(limiter, "long", { limit: 1, window: Duration.hours(1) })).toBe(true)
            yield* TestClock.adjust("61 seconds")
            yield* TestClock.adjust("61 seconds")
            yield* Effect.yieldNow()
            yield* TestClock.setTime(START + 5_000)
            expect(yield* allowed(limiter, "short", { limit: 1, window: Duration.seconds(10) })).toBe(true)
            expect(yield* allowed(limiter, "long", { limit: 1, window: Duration.hours(1) })).toBe(false)
          })
        )
    )

    it.effect("without a sweep, an expired key is still held (control for the sweeper test)", () =>
      withLimiter((limiter) =>
        Effect.gen(function* () {
          expect(yield* allowed(limiter, "short", { limit: 1, window: Duration.seconds(10) })).toBe(true)
          yield* TestClock.adjust("20 seconds")
          yield* TestClock.setTime(START + 5_000)
          expect(yield* allowed(limiter, "short", { limit: 1, window: Duration.seconds(10) })).toBe(false)
        })
      )
    )
  })
}
