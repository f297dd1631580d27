import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, Ref, TestClock } from "effect"
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

  it.effect("bounds a call made where interruption is held off, as a sign-in's attempt is decided", () =>
    Effect.gen(function* () {
      const call = yield* Effect.fork(Effect.uninterruptible(unavailable(Effect.never)))
      yield* TestClock.adjust("5 seconds")
      expect(yield* Fiber.await(call)).toEqual(Exit.fail(new StoreUnavailableError({ store: "database" })))
    })
  )

  it.effect("where interruption is held off, the caller's own interruption still waits for the call", () =>
    Effect.gen(function* () {
      const answer = yield* Deferred.make<void>()
      const answered = yield* Ref.make(false)
      const call = yield* Effect.fork(
        Effect.uninterruptible(Effect.zipRight(unavailable(Deferred.await(answer)), Ref.set(answered, true)))
      )
      yield* Effect.yieldNow()
      const leaving = yield* Effect.fork(Fiber.interrupt(call))
      yield* TestClock.adjust("1 second")
      yield* Deferred.succeed(answer, undefined)
      yield* Fiber.join(leaving)
      expect(yield* Ref.get(answered)).toBe(true)
    })
  )

  /** Node's pending timers: a timer left behind would hold one for the whole store timeout. */
  const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length
  /**
   * No more timers than before: the runner's own may end meanwhile (seen in CI: 2 before, 1
   * after), never one more for the call's timeout.
   */
  const noTimerLeft = (before: number) => expect(timers()).toBeLessThanOrEqual(before)

  it.live("an answer in time leaves no timer behind", () =>
    Effect.gen(function* () {
      const before = timers()
      expect(yield* unavailable(Effect.succeed(7))).toBe(7)
      yield* Effect.sleep("10 millis")
      noTimerLeft(before)
    })
  )

  it.live("a caller that leaves, where it may, does not wait for the call, which is interrupted behind it", () =>
    Effect.gen(function* () {
      const before = timers()
      const interrupted = yield* Deferred.make<void>()
      const call = yield* Effect.fork(
        unavailable(Effect.onInterrupt(Effect.never, () => Deferred.succeed(interrupted, undefined)))
      )
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(call)
      yield* Deferred.await(interrupted)
      yield* Effect.sleep("10 millis")
      noTimerLeft(before)
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
