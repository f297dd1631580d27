import { describe, expect, it } from "@effect/vitest"
import { DateTime, Duration, Effect, Layer, TestClock } from "effect"
import { Blacklist } from "../../application/ports/Blacklist.js"
import * as BlacklistMemory from "../../infrastructure/memory/BlacklistMemory.js"
import * as BlacklistRedis from "../../infrastructure/redis/BlacklistRedis.js"
import { clientLayer, testRedisUrl } from "../support/redis.js"

const START = Date.UTC(2032, 1, 2, 3, 4, 5)

/** An instant `offset` from now on the TestClock. */
const inFuture = (offset: Duration.DurationInput) => Effect.map(DateTime.now, DateTime.addDuration(offset))

/** Lets the sweeper run at least once more: two sweep intervals, whenever it scheduled its next run. */
const passSweepInterval = Effect.gen(function* () {
  yield* TestClock.adjust("61 seconds")
  yield* TestClock.adjust("61 seconds")
  yield* Effect.yieldNow()
})

/**
 * One contract, run against every adapter; Redis is skipped without TEST_REDIS_URL. Redis expires
 * keys on its own timer, not on the TestClock, so the sweeper tests are the memory adapter's own.
 */
const adapters = [
  { name: "BlacklistMemory", layer: BlacklistMemory.layer, skip: false, sweeps: true },
  {
    name: "BlacklistRedis",
    layer: BlacklistRedis.layer.pipe(Layer.provide(clientLayer())),
    skip: testRedisUrl === undefined,
    sweeps: false
  }
]

for (const adapter of adapters) {
  /** Each test builds its own blacklist (and sweeper) on the TestClock. */
  const withBlacklist = <A, E>(body: (blacklist: typeof Blacklist.Service) => Effect.Effect<A, E>) =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      return yield* Effect.flatMap(Blacklist, body).pipe(Effect.provide(adapter.layer))
    })

  describe.skipIf(adapter.skip)(adapter.name, () => {
    it.effect("a token is spent once: the first burn answers true, every later one false", () =>
      withBlacklist((blacklist) =>
        Effect.gen(function* () {
          const until = yield* inFuture("5 minutes")
          expect(yield* blacklist.burn("state-1", until)).toBe(true)
          expect(yield* blacklist.burn("state-1", until)).toBe(false)
          expect(yield* blacklist.burn("state-1", yield* inFuture("10 minutes"))).toBe(false)
          expect(yield* blacklist.burn("state-2", until)).toBe(true)
        })
      )
    )

    it.effect("of twenty racing burns of one token, exactly one spends it", () =>
      withBlacklist((blacklist) =>
        Effect.gen(function* () {
          const until = yield* inFuture("5 minutes")
          const spent = yield* Effect.all(
            Array.from({ length: 20 }, () => blacklist.burn("state-race", until)),
            { concurrency: "unbounded" }
          )
          expect(spent.filter(Boolean)).toHaveLength(1)
        })
      )
    )

    it.effect("a spent token stays spent until its `until`, to the millisecond on the test clock", () =>
      withBlacklist((blacklist) =>
        Effect.gen(function* () {
          yield* blacklist.burn("state-1", yield* inFuture("5 minutes"))
          yield* TestClock.adjust(Duration.millis(5 * 60_000 - 1))
          expect(yield* blacklist.burn("state-1", yield* inFuture("5 minutes"))).toBe(false)
        })
      )
    )

    describe.runIf(adapter.sweeps)("the sweeper", () => {
      // A burn after `until` may spend the token again whether or not the sweeper dropped the
      // entry; to see whether it did, the tests move the TestClock back before `until`: an entry
      // still held refuses the burn, a swept one does not.

      it.effect("keeps an expired entry until it runs (control)", () =>
        withBlacklist((blacklist) =>
          Effect.gen(function* () {
            yield* blacklist.burn("state-1", yield* inFuture("10 seconds"))
            yield* TestClock.adjust("20 seconds")
            yield* TestClock.setTime(START + 5_000)
            expect(yield* blacklist.burn("state-1", yield* inFuture("10 seconds"))).toBe(false)
          })
        )
      )

      it.effect("drops expired entries once the sweep interval (1 minute) has passed, and keeps live ones", () =>
        withBlacklist((blacklist) =>
          Effect.gen(function* () {
            yield* blacklist.burn("short", yield* inFuture("10 seconds"))
            yield* blacklist.burn("long", yield* inFuture("1 hour"))
            yield* passSweepInterval
            yield* TestClock.setTime(START + 5_000)
            expect(yield* blacklist.burn("short", yield* inFuture("10 seconds"))).toBe(true)
            expect(yield* blacklist.burn("long", yield* inFuture("10 seconds"))).toBe(false)
          })
        )
      )
    })
  })
}
