import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber, TestClock } from "effect"
import { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import { unavailable } from "../../infrastructure/sql/failures.js"
import { StoreTimeout } from "../../infrastructure/storeTimeout.js"

describe("a store call that does not answer", () => {
  it.effect("fails as an unavailable store once the store timeout has passed, not before", () =>
    Effect.gen(function* () {
      const call = yield* Effect.fork(unavailable(Effect.never))
      yield* TestClock.adjust(Duration.millis(4_999))
      expect(yield* Fiber.poll(call)).toEqual(expect.objectContaining({ _tag: "None" }))
      yield* TestClock.adjust(Duration.millis(1))
      const exit = yield* Fiber.await(call)
      expect(exit).toEqual(Exit.fail(new StoreUnavailableError({ store: "database" })))
    })
  )

  it.effect("follows the configured timeout", () =>
    Effect.gen(function* () {
      const call = yield* Effect.fork(
        unavailable(Effect.never).pipe(Effect.provideService(StoreTimeout, Duration.seconds(1)))
      )
      yield* TestClock.adjust("1 second")
      expect(Exit.isFailure(yield* Fiber.await(call))).toBe(true)
    })
  )

  it.effect("is not bounded when the timeout is infinite (SQLite, whose calls run on the event loop)", () =>
    Effect.gen(function* () {
      const call = yield* Effect.fork(
        unavailable(Effect.never).pipe(Effect.provideService(StoreTimeout, Duration.infinity))
      )
      yield* TestClock.adjust("1 hour")
      expect(yield* Fiber.poll(call)).toEqual(expect.objectContaining({ _tag: "None" }))
      yield* Fiber.interrupt(call)
    })
  )
})
