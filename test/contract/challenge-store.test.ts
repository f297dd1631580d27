import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Option, TestClock } from "effect"
import { ChallengeStore } from "../../application/ports/ChallengeStore.js"
import * as ChallengeStoreMemory from "../../infrastructure/memory/ChallengeStoreMemory.js"
import * as ChallengeStoreRedis from "../../infrastructure/redis/ChallengeStoreRedis.js"
import { clientLayer, testRedisUrl } from "../support/redis.js"

const START = Date.UTC(2032, 1, 2, 3, 4, 5)
const TTL = Duration.seconds(60)

/** Real time, for Redis' own expiry timer; the TestClock does not drive it. */
const realSleep = (duration: Duration.Duration) =>
  Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, Duration.toMillis(duration))))

/**
 * One contract, run against every adapter; Redis is skipped without TEST_REDIS_URL. `elapse`
 * lets a lifetime pass: on the TestClock for memory, for real for Redis (whose tests then use
 * short lifetimes). The exact instant of expiry and the sweeper are the memory adapter's own.
 */
const adapters = [
  {
    name: "ChallengeStoreMemory",
    layer: ChallengeStoreMemory.layer,
    skip: false,
    memory: true,
    elapse: (duration: Duration.Duration) => TestClock.adjust(duration)
  },
  {
    name: "ChallengeStoreRedis",
    layer: ChallengeStoreRedis.layer.pipe(Layer.provide(clientLayer())),
    skip: testRedisUrl === undefined,
    memory: false,
    // Redis expires keys within a millisecond or so of their time; leave it some.
    elapse: (duration: Duration.Duration) => realSleep(Duration.sum(duration, Duration.millis(50)))
  }
]

for (const adapter of adapters) {
  /** Each test builds its own store (and sweeper) on the TestClock. */
  const withStore = <A, E>(body: (store: typeof ChallengeStore.Service) => Effect.Effect<A, E>) =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      return yield* Effect.flatMap(ChallengeStore, body).pipe(Effect.provide(adapter.layer))
    })

  describe.skipIf(adapter.skip)(adapter.name, () => {
    it.effect("take answers the challenge put under the key", () =>
      withStore((store) =>
        Effect.gen(function* () {
          yield* store.put("passkey:reg:abc", "challenge-1", TTL)
          yield* store.put("passkey:auth:abc", "challenge-2", TTL)
          expect(yield* store.take("passkey:reg:abc")).toEqual(Option.some("challenge-1"))
          expect(yield* store.take("passkey:auth:abc")).toEqual(Option.some("challenge-2"))
        })
      )
    )

    it.effect("a challenge is taken once: a second take answers none", () =>
      withStore((store) =>
        Effect.gen(function* () {
          yield* store.put("passkey:auth:once", "challenge", TTL)
          expect(yield* store.take("passkey:auth:once")).toEqual(Option.some("challenge"))
          expect(yield* store.take("passkey:auth:once")).toEqual(Option.none())
        })
      )
    )

    it.effect("an unknown key answers none", () =>
      withStore((store) =>
        Effect.gen(function* () {
          yield* store.put("passkey:reg:known", "challenge", TTL)
          expect(yield* store.take("passkey:reg:unknown")).toEqual(Option.none())
          expect(yield* store.take("passkey:auth:known")).toEqual(Option.none())
        })
      )
    )

    it.effect("an expired challenge answers none, while a longer-lived one is still there", () =>
      withStore((store) =>
        Effect.gen(function* () {
          const short = Duration.millis(200)
          yield* store.put("passkey:auth:short", "short", short)
          yield* store.put("passkey:auth:long", "long", TTL)
          yield* adapter.elapse(short)
          expect(yield* store.take("passkey:auth:short")).toEqual(Option.none())
          expect(yield* store.take("passkey:auth:long")).toEqual(Option.some("long"))
        })
      )
    )

    it.effect("a put replaces the challenge and the lifetime the key held", () =>
      withStore((store) =>
        Effect.gen(function* () {
          yield* store.put("passkey:reg:again", "first", Duration.millis(200))
          yield* store.put("passkey:reg:again", "second", TTL)
          yield* adapter.elapse(Duration.millis(200))
          expect(yield* store.take("passkey:reg:again")).toEqual(Option.some("second"))
        })
      )
    )

    it.effect("a lifetime of zero stores nothing that can be taken", () =>
      withStore((store) =>
        Effect.gen(function* () {
          yield* store.put("passkey:reg:zero", "challenge", Duration.zero)
          expect(yield* store.take("passkey:reg:zero")).toEqual(Option.none())
        })
      )
    )

    it.effect("of 20 parallel takes of one key, exactly one answers the challenge", () =>
      withStore((store) =>
        Effect.gen(function* () {
          yield* store.put("passkey:auth:race", "challenge", TTL)
          const answers = yield* Effect.all(
            Array.from({ length: 20 }, () => store.take("passkey:auth:race")),
            { concurrency: "unbounded" }
          )
          expect(answers.filter(Option.isSome)).toEqual([Option.some("challenge")])
        })
      )
    )

    describe.runIf(adapter.memory)("expiry on the TestClock", () => {
      it.effect("a challenge is there until the last millisecond of its lifetime, and not from its end", () =>
        withStore((store) =>
          Effect.gen(function* () {
            yield* store.put("passkey:auth:a", "a", TTL)
            yield* store.put("passkey:auth:b", "b", TTL)
            yield* TestClock.adjust(Duration.millis(59_999))
            expect(yield* store.take("passkey:auth:a")).toEqual(Option.some("a"))
            yield* TestClock.adjust(Duration.millis(1))
            expect(yield* store.take("passkey:auth:b")).toEqual(Option.none())
          })
        )
      )

      // Once expired, take answers none whether or not the entry is still held. To see whether
      // the sweeper dropped it, the tests move the TestClock back into its lifetime: an entry
      // still held answers again, a swept one does not.
      it.effect("the sweeper keeps an expired challenge until it runs (control)", () =>
        withStore((store) =>
          Effect.gen(function* () {
            yield* store.put("passkey:auth:kept", "kept", Duration.seconds(10))
            yield* TestClock.adjust("20 seconds")
            yield* TestClock.setTime(START + 5_000)
            expect(yield* store.take("passkey:auth:kept")).toEqual(Option.some("kept"))
          })
        )
      )

      it.effect("the sweeper drops expired challenges once a minute has passed, and keeps live ones", () =>
        withStore((store) =>
          Effect.gen(function* () {
            yield* store.put("passkey:auth:expired", "expired", Duration.seconds(10))
            yield* store.put("passkey:auth:live", "live", Duration.minutes(5))
            yield* TestClock.adjust("61 seconds")
            yield* TestClock.adjust("61 seconds")
            yield* Effect.yieldNow()
            yield* TestClock.setTime(START + 5_000)
            expect(yield* store.take("passkey:auth:expired")).toEqual(Option.none())
            expect(yield* store.take("passkey:auth:live")).toEqual(Option.some("live"))
          })
        )
      )
    })
  })
}
