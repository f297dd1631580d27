import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Option, TestClock } from "effect"
import { ChallengeStore } from "../../application/ports/ChallengeStore.js"
import * as ChallengeStoreMemory from "../../infrastructure/memory/ChallengeStoreMemory.js"
import * as ChallengeStoreRedis from "../../infrastructure/redis/ChallengeStoreRedis.js"
import { RedisClient } from "../../infrastructure/redis/RedisClient.js"
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

      // The test above ends its lifetime on the sweeper's minute, where the sweep alone would drop
      // it; this one ends between sweeps, so only take's own check of the lifetime answers.
      it.effect("a challenge of PASSKEY_CHALLENGE_TTL seconds is gone from its end, between two sweeps", () =>
        withStore((store) =>
          Effect.gen(function* () {
            const ttl = Duration.seconds(10)
            yield* store.put("passkey:reg:a", "a", ttl)
            yield* store.put("passkey:reg:b", "b", ttl)
            yield* store.put("passkey:reg:c", "c", ttl)
            yield* TestClock.adjust(Duration.millis(9_999))
            expect(yield* store.take("passkey:reg:a")).toEqual(Option.some("a"))
            yield* TestClock.adjust(Duration.millis(1))
            expect(yield* store.take("passkey:reg:b")).toEqual(Option.none())
            yield* TestClock.adjust(Duration.seconds(1))
            expect(yield* store.take("passkey:reg:c")).toEqual(Option.none())
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

/**
 * PASSKEY_CHALLENGE_TTL is exact (docs/integrating.md, "Social sign-in (OAuth)"). Redis keeps the lifetime to the
 * millisecond (SET PX), never rounded up to whole seconds, and its timer, not the TestClock, ends
 * it: so real time, measured from the moment the put was answered (Redis started the lifetime
 * before that moment).
 */
describe.skipIf(testRedisUrl === undefined)("ChallengeStoreRedis: the lifetime is exact", () => {
  const sleepUntil = (at: number) => realSleep(Duration.millis(Math.max(0, at - Date.now())))

  it.live("a challenge is there 200 ms before its end and gone 10 ms after it; Redis holds it to the millisecond", () =>
    Effect.gen(function* () {
      const store = yield* ChallengeStore
      const client = yield* RedisClient
      const ttl = Duration.millis(1_500)
      yield* store.put("passkey:auth:before", "before", ttl)
      yield* store.put("passkey:auth:after", "after", ttl)
      const answered = Date.now()
      const left = yield* Effect.promise(() => client.redis.pttl(client.key("passkey:auth:after")))
      expect(left).toBeGreaterThan(1_300)
      expect(left).toBeLessThanOrEqual(1_500)

      yield* sleepUntil(answered + 1_300)
      expect(yield* store.take("passkey:auth:before")).toEqual(Option.some("before"))
      yield* sleepUntil(answered + 1_510)
      expect(yield* store.take("passkey:auth:after")).toEqual(Option.none())
    }).pipe(Effect.provide(ChallengeStoreRedis.layer.pipe(Layer.provideMerge(clientLayer()))))
  )
})
