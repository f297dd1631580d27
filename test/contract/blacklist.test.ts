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
    it.effect("nothing is revoked at first", () =>
      withBlacklist((blacklist) =>
        Effect.gen(function* () {
          expect(yield* blacklist.isRevoked("jti-1", null)).toBe(false)
          expect(yield* blacklist.isRevoked("jti-1", "family-1")).toBe(false)
        })
      )
    )

    it.effect("a revoked jti is revoked until its `until`, and not from that instant on", () =>
      withBlacklist((blacklist) =>
        Effect.gen(function* () {
          yield* blacklist.revokeToken("jti-1", yield* inFuture("15 minutes"))
          expect(yield* blacklist.isRevoked("jti-1", null)).toBe(true)
          yield* TestClock.adjust(Duration.millis(15 * 60_000 - 1))
          expect(yield* blacklist.isRevoked("jti-1", null)).toBe(true)
          yield* TestClock.adjust(Duration.millis(1))
          expect(yield* blacklist.isRevoked("jti-1", null)).toBe(false)
          yield* TestClock.adjust("1 hour")
          expect(yield* blacklist.isRevoked("jti-1", null)).toBe(false)
        })
      )
    )

    it.effect("a revocation with an `until` already past revokes nothing", () =>
      withBlacklist((blacklist) =>
        Effect.gen(function* () {
          yield* blacklist.revokeToken("jti-1", yield* inFuture(Duration.zero))
          yield* blacklist.revokeFamily("family-1", DateTime.unsafeMake(START - 1000))
          expect(yield* blacklist.isRevoked("jti-1", null)).toBe(false)
          expect(yield* blacklist.isRevoked("jti-2", "family-1")).toBe(false)
        })
      )
    )

    it.effect("a revoked jti covers that jti only, in any family", () =>
      withBlacklist((blacklist) =>
        Effect.gen(function* () {
          yield* blacklist.revokeToken("jti-1", yield* inFuture("15 minutes"))
          expect(yield* blacklist.isRevoked("jti-1", "family-1")).toBe(true)
          expect(yield* blacklist.isRevoked("jti-2", null)).toBe(false)
          expect(yield* blacklist.isRevoked("jti-2", "family-1")).toBe(false)
        })
      )
    )

    it.effect("a revoked family covers every jti that carries it, until its `until`", () =>
      withBlacklist((blacklist) =>
        Effect.gen(function* () {
          yield* blacklist.revokeFamily("family-1", yield* inFuture("30 minutes"))
          expect(yield* blacklist.isRevoked("jti-1", "family-1")).toBe(true)
          expect(yield* blacklist.isRevoked("jti-any-other", "family-1")).toBe(true)
          expect(yield* blacklist.isRevoked("jti-1", "family-2")).toBe(false)
          yield* TestClock.adjust(Duration.millis(30 * 60_000 - 1))
          expect(yield* blacklist.isRevoked("jti-9", "family-1")).toBe(true)
          yield* TestClock.adjust(Duration.millis(1))
          expect(yield* blacklist.isRevoked("jti-9", "family-1")).toBe(false)
        })
      )
    )

    it.effect("a token without a family is checked by its jti only", () =>
      withBlacklist((blacklist) =>
        Effect.gen(function* () {
          yield* blacklist.revokeFamily("family-1", yield* inFuture("30 minutes"))
          expect(yield* blacklist.isRevoked("jti-1", null)).toBe(false)
          // A family id that happens to equal a revoked jti, or the reverse, is not confused with it.
          yield* blacklist.revokeToken("shared-name", yield* inFuture("30 minutes"))
          expect(yield* blacklist.isRevoked("jti-2", "shared-name")).toBe(false)
          expect(yield* blacklist.isRevoked("family-1", null)).toBe(false)
        })
      )
    )

    it.effect("a later `until` extends a revocation; an earlier one does not shorten it", () =>
      withBlacklist((blacklist) =>
        Effect.gen(function* () {
          yield* blacklist.revokeToken("extended", yield* inFuture("1 minute"))
          yield* blacklist.revokeToken("extended", yield* inFuture("10 minutes"))
          yield* blacklist.revokeToken("kept", yield* inFuture("10 minutes"))
          yield* blacklist.revokeToken("kept", yield* inFuture("1 minute"))
          yield* blacklist.revokeFamily("family-extended", yield* inFuture("1 minute"))
          yield* blacklist.revokeFamily("family-extended", yield* inFuture("10 minutes"))
          yield* blacklist.revokeFamily("family-kept", yield* inFuture("10 minutes"))
          yield* blacklist.revokeFamily("family-kept", yield* inFuture("1 minute"))

          yield* TestClock.adjust("5 minutes")
          expect(yield* blacklist.isRevoked("extended", null)).toBe(true)
          expect(yield* blacklist.isRevoked("kept", null)).toBe(true)
          expect(yield* blacklist.isRevoked("jti", "family-extended")).toBe(true)
          expect(yield* blacklist.isRevoked("jti", "family-kept")).toBe(true)

          yield* TestClock.adjust("5 minutes")
          expect(yield* blacklist.isRevoked("extended", null)).toBe(false)
          expect(yield* blacklist.isRevoked("kept", null)).toBe(false)
          expect(yield* blacklist.isRevoked("jti", "family-extended")).toBe(false)
          expect(yield* blacklist.isRevoked("jti", "family-kept")).toBe(false)
        })
      )
    )

    describe.runIf(adapter.sweeps)("the sweeper", () => {
      // Once an entry has expired, isRevoked answers false whether or not it is still held. To see
      // whether the sweeper dropped it, the tests move the TestClock back before its `until`: an
      // entry still held shows as revoked again, a swept one does not.

      it.effect("keeps an expired entry until it runs (control)", () =>
        withBlacklist((blacklist) =>
          Effect.gen(function* () {
            yield* blacklist.revokeToken("jti-1", yield* inFuture("10 seconds"))
            yield* TestClock.adjust("20 seconds")
            expect(yield* blacklist.isRevoked("jti-1", null)).toBe(false)
            yield* TestClock.setTime(START + 5_000)
            expect(yield* blacklist.isRevoked("jti-1", null)).toBe(true)
          })
        )
      )

      it.effect("drops expired entries once the sweep interval (1 minute) has passed", () =>
        withBlacklist((blacklist) =>
          Effect.gen(function* () {
            yield* blacklist.revokeToken("jti-1", yield* inFuture("10 seconds"))
            yield* blacklist.revokeFamily("family-1", yield* inFuture("10 seconds"))
            yield* passSweepInterval
            expect(yield* blacklist.isRevoked("jti-1", null)).toBe(false)
            expect(yield* blacklist.isRevoked("jti-2", "family-1")).toBe(false)
            yield* TestClock.setTime(START + 5_000)
            expect(yield* blacklist.isRevoked("jti-1", null)).toBe(false)
            expect(yield* blacklist.isRevoked("jti-2", "family-1")).toBe(false)
          })
        )
      )

      it.effect("keeps entries that have not expired yet", () =>
        withBlacklist((blacklist) =>
          Effect.gen(function* () {
            yield* blacklist.revokeToken("short", yield* inFuture("10 seconds"))
            yield* blacklist.revokeToken("long", yield* inFuture("1 hour"))
            yield* blacklist.revokeFamily("family-long", yield* inFuture("1 hour"))
            yield* passSweepInterval
            expect(yield* blacklist.isRevoked("long", null)).toBe(true)
            expect(yield* blacklist.isRevoked("jti", "family-long")).toBe(true)
            yield* TestClock.adjust("1 hour")
            expect(yield* blacklist.isRevoked("long", null)).toBe(false)
            expect(yield* blacklist.isRevoked("jti", "family-long")).toBe(false)
          })
        )
      )

      it.effect("keeps sweeping at every interval, not only once", () =>
        withBlacklist((blacklist) =>
          Effect.gen(function* () {
            yield* passSweepInterval
            yield* passSweepInterval
            const revokedAt = yield* DateTime.now
            yield* blacklist.revokeToken("late", yield* inFuture("10 seconds"))
            yield* passSweepInterval
            yield* TestClock.setTime(DateTime.toEpochMillis(revokedAt) + 5_000)
            expect(yield* blacklist.isRevoked("late", null)).toBe(false)
          })
        )
      )
    })
  })
}
