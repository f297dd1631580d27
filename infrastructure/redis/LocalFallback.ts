import { Clock, Context, Duration, Effect, Layer, Schedule } from "effect"
import { protectionsLocal } from "../../application/metrics.js"
import { AttemptCounter } from "../../application/ports/AttemptCounter.js"
import { ProtectionsCounting } from "../../application/ports/ProtectionsCounting.js"
import { RateLimiter } from "../../application/ports/RateLimiter.js"
import type { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import * as AttemptCounterMemory from "../memory/AttemptCounterMemory.js"
import * as RateLimiterMemory from "../memory/RateLimiterMemory.js"
import * as AttemptCounterRedis from "./AttemptCounterRedis.js"
import * as RateLimiterRedis from "./RateLimiterRedis.js"
import { RedisClient } from "./RedisClient.js"

/** However many requests meet an unusable Redis, the log hears of it once in this long. */
const REPORT_EVERY = Duration.minutes(1)

/** How often an unusable Redis is tried again: soon after it failed, then every two seconds at most. */
const retrying = Schedule.exponential("100 millis").pipe(Schedule.union(Schedule.spaced("2 seconds")))

/**
 * Rate limits and lockout never fail open. While Redis is unusable, each process counts on its
 * own (the memory adapters): one error line a minute, the `portcullis_protections_local` gauge
 * at 1. Meanwhile Redis is tried in the background, not by requests, which would each wait for
 * it; once it takes a write again, counting goes back to it and the gauge to 0. What was counted
 * locally stays local: Redis goes on from what it holds.
 */
export class LocalFallback extends Context.Tag("infrastructure/LocalFallback")<
  LocalFallback,
  {
    /** `shared` on Redis, or `local` when Redis is unusable or fails it. */
    readonly run: <A, E>(
      shared: Effect.Effect<A, StoreUnavailableError>,
      local: Effect.Effect<A, E>
    ) => Effect.Effect<A, E>
    readonly local: Effect.Effect<boolean>
  }
>() {}

export const make = Effect.gen(function* () {
  const client = yield* RedisClient
  const unusable = yield* Effect.makeLatch(false)
  let local = false
  let reportedAt = Number.NEGATIVE_INFINITY

  const report = Effect.flatMap(Clock.currentTimeMillis, (now) => {
    if (now - reportedAt < Duration.toMillis(REPORT_EVERY)) return Effect.void
    reportedAt = now
    return Effect.logError(
      "redis unusable: rate limits and lockout count in each process on its own until it answers again"
    )
  })

  /** The flag, the gauge and the prober's latch change together, with no other fiber in between. */
  const setLocal = (value: boolean) => {
    local = value
    protectionsLocal.unsafeUpdate(value ? 1 : 0, [])
    if (value) unusable.unsafeOpen()
    else unusable.unsafeClose()
  }

  const fallBack = Effect.suspend(() => {
    if (!local) setLocal(true)
    return report
  })

  const recovered = Effect.suspend(() => {
    setLocal(false)
    return Effect.logInfo("redis usable again: rate limits and lockout count in Redis")
  })

  // A write, as the protections' own scripts are: a Redis that answers but takes no write
  // (out of memory, a read-only replica) is no more usable than one that does not answer.
  const probe = client.use("protections probe", (redis) =>
    redis.set(client.key("protections:probe"), "1", "PX", 60_000)
  )

  setLocal(false)
  yield* unusable.await.pipe(
    Effect.zipRight(
      Effect.retry(
        Effect.tapError(probe, () => report),
        retrying
      )
    ),
    Effect.zipRight(recovered),
    Effect.forever,
    Effect.forkScoped
  )

  return LocalFallback.of({
    run: (shared, fallback) =>
      Effect.suspend(() =>
        local
          ? Effect.zipRight(report, fallback)
          : Effect.catchTag(shared, "StoreUnavailableError", () => Effect.zipRight(fallBack, fallback))
      ),
    local: Effect.sync(() => local)
  })
})

export const layer = Layer.scoped(LocalFallback, make)

/** The Redis rate limiter, falling back to the memory one while Redis is unusable. */
export const rateLimiter = Layer.scoped(
  RateLimiter,
  Effect.gen(function* () {
    const fallback = yield* LocalFallback
    const redis = yield* RateLimiterRedis.make
    const memory = yield* RateLimiterMemory.make
    return RateLimiter.of({ hit: (key, rule) => fallback.run(redis.hit(key, rule), memory.hit(key, rule)) })
  })
)

/** The Redis attempt counter, falling back to the memory one while Redis is unusable. */
export const attemptCounter = Layer.scoped(
  AttemptCounter,
  Effect.gen(function* () {
    const fallback = yield* LocalFallback
    const redis = yield* AttemptCounterRedis.make
    const memory = yield* AttemptCounterMemory.make
    return AttemptCounter.of({
      attempt: (identifier, rule) => fallback.run(redis.attempt(identifier, rule), memory.attempt(identifier, rule)),
      clear: (identifier) => fallback.run(redis.clear(identifier), memory.clear(identifier))
    })
  })
)

/** Where the protections count, for readiness. */
export const counting = Layer.effect(
  ProtectionsCounting,
  Effect.map(LocalFallback, (fallback) => ({ local: fallback.local }))
)

/** Both protections over Redis with their fallback, and where they count: on one RedisClient. */
export const protections = Layer.mergeAll(rateLimiter, attemptCounter, counting).pipe(Layer.provide(layer))
