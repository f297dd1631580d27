import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, TestClock } from "effect"
import { AttemptCounter, type LockoutRule } from "../../application/ports/AttemptCounter.js"
import * as AttemptCounterMemory from "../../infrastructure/memory/AttemptCounterMemory.js"
import * as AttemptCounterRedis from "../../infrastructure/redis/AttemptCounterRedis.js"
import * as LocalFallback from "../../infrastructure/redis/LocalFallback.js"
import { clientLayer, testRedisUrl } from "../support/redis.js"
import { stoppedRedisClient } from "../support/stoppedRedis.js"

const START = Date.UTC(2032, 1, 2, 3, 4, 5)
const rule: LockoutRule = { maxAttempts: 3, duration: Duration.minutes(15) }

/** The attempt as plain data: `locked <ms>` or `counted <n>` (with `, locking`). */
const attempt = (counter: typeof AttemptCounter.Service, identifier: string, lockout = rule) =>
  Effect.map(counter.attempt(identifier, lockout), (result) =>
    result._tag === "Locked"
      ? `locked ${Duration.toMillis(result.retryAfter)}`
      : `counted ${result.attempts}${result.locking ? ", locking" : ""}`
  )

/**
 * One contract, run against every adapter; Redis is skipped without TEST_REDIS_URL. Redis expires
 * keys on its own timer, not on the TestClock, so the sweeper test is the memory adapter's own.
 */
const adapters = [
  { name: "AttemptCounterMemory", layer: AttemptCounterMemory.layer, skip: false, sweeps: true },
  {
    name: "AttemptCounterRedis",
    layer: AttemptCounterRedis.layer.pipe(Layer.provide(clientLayer())),
    skip: testRedisUrl === undefined,
    sweeps: false
  },
  // The adapter the deployment uses with REDIS_URL: on Redis while it answers, in memory, never
  // failing, while it is unusable.
  {
    name: "AttemptCounterRedis falling back to memory, Redis answering",
    layer: LocalFallback.protections.pipe(Layer.provide(clientLayer())),
    skip: testRedisUrl === undefined,
    sweeps: false
  },
  {
    name: "AttemptCounterRedis falling back to memory, Redis gone",
    layer: LocalFallback.protections.pipe(Layer.provide(stoppedRedisClient)),
    skip: testRedisUrl === undefined,
    sweeps: false
  }
]

for (const adapter of adapters) {
  const withCounter = <A, E>(body: (counter: typeof AttemptCounter.Service) => Effect.Effect<A, E>) =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      return yield* Effect.flatMap(AttemptCounter, body).pipe(Effect.provide(adapter.layer))
    })

  describe.skipIf(adapter.skip)(adapter.name, () => {
    it.effect("counts attempts; the one that reaches the maximum locks for the duration, later ones are refused", () =>
      withCounter((counter) =>
        Effect.gen(function* () {
          expect(yield* attempt(counter, "a@example.com")).toBe("counted 1")
          expect(yield* attempt(counter, "a@example.com")).toBe("counted 2")
          expect(yield* attempt(counter, "a@example.com")).toBe("counted 3, locking")
          expect(yield* attempt(counter, "a@example.com")).toBe(`locked ${15 * 60_000}`)
          yield* TestClock.adjust("1 minute")
          expect(yield* attempt(counter, "a@example.com")).toBe(`locked ${14 * 60_000}`)
          expect(yield* attempt(counter, "b@example.com")).toBe("counted 1")
        })
      )
    )

    it.effect("refused attempts are not counted, and the lock ends after the duration with a fresh count", () =>
      withCounter((counter) =>
        Effect.gen(function* () {
          for (let i = 0; i < 3; i++) yield* attempt(counter, "a")
          for (let i = 0; i < 5; i++) expect(yield* attempt(counter, "a")).toMatch(/^locked/)
          yield* TestClock.adjust(Duration.millis(15 * 60_000 - 1))
          expect(yield* attempt(counter, "a")).toBe("locked 1")
          yield* TestClock.adjust(Duration.millis(1))
          expect(yield* attempt(counter, "a")).toBe("counted 1")
        })
      )
    )

    it.effect("clear forgets the attempts and the lock", () =>
      withCounter((counter) =>
        Effect.gen(function* () {
          yield* attempt(counter, "a")
          yield* attempt(counter, "a")
          yield* counter.clear("a")
          expect(yield* attempt(counter, "a")).toBe("counted 1")
          yield* attempt(counter, "a")
          expect(yield* attempt(counter, "a")).toBe("counted 3, locking")
          yield* counter.clear("a")
          expect(yield* attempt(counter, "a")).toBe("counted 1")
        })
      )
    )

    it.effect("attempts are forgotten the lockout duration after the last one", () =>
      withCounter((counter) =>
        Effect.gen(function* () {
          yield* attempt(counter, "a")
          yield* TestClock.adjust("14 minutes")
          // Still counted: the run goes on while attempts come closer than the duration.
          expect(yield* attempt(counter, "a")).toBe("counted 2")
          yield* TestClock.adjust("15 minutes")
          expect(yield* attempt(counter, "a")).toBe("counted 1")
        })
      )
    )

    it.effect.runIf(adapter.sweeps)(
      "the sweeper drops identifiers with nothing left to remember, and keeps locked ones",
      () =>
        withCounter((counter) =>
          Effect.gen(function* () {
            const short = { maxAttempts: 3, duration: Duration.seconds(10) }
            yield* attempt(counter, "tried-once", short)
            for (let i = 0; i < 3; i++) yield* attempt(counter, "locked")
            yield* TestClock.adjust("61 seconds")
            yield* TestClock.adjust("61 seconds")
            yield* Effect.yieldNow()
            // Back inside the short run: a held entry would count a second attempt.
            yield* TestClock.setTime(START + 5_000)
            expect(yield* attempt(counter, "tried-once", short)).toBe("counted 1")
            expect(yield* attempt(counter, "locked")).toMatch(/^locked/)
          })
        )
    )

    it.effect("without a sweep, an expired entry is still held (control for the sweeper test)", () =>
      withCounter((counter) =>
        Effect.gen(function* () {
          const short = { maxAttempts: 3, duration: Duration.seconds(10) }
          yield* attempt(counter, "tried-once", short)
          yield* TestClock.adjust("20 seconds")
          yield* TestClock.setTime(START + 5_000)
          expect(yield* attempt(counter, "tried-once", short)).toBe("counted 2")
        })
      )
    )
  })
}
