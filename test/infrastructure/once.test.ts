import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber } from "effect"
import * as Once from "../../infrastructure/sql/once.js"

/** The group commit's hand-over: one outcome, given once, to every fiber that waits or asks later. */
describe("Once", () => {
  it.effect("gives its outcome to every fiber waiting, and to those that ask later", () =>
    Effect.gen(function* () {
      const once = Once.make<string, string>()
      const first = yield* Effect.fork(Once.wait(once))
      const second = yield* Effect.fork(Once.wait(once))
      yield* Effect.yieldNow()
      expect(once.waiters.size).toBe(2)
      yield* Once.done(once, Exit.succeed("committed"))
      expect(yield* Fiber.join(first)).toBe("committed")
      expect(yield* Fiber.join(second)).toBe("committed")
      expect(yield* Once.wait(once)).toBe("committed")
      expect(once.waiters.size).toBe(0)
    })
  )

  it.effect("keeps its first outcome: a failure given after a success changes nothing", () =>
    Effect.gen(function* () {
      const once = Once.make<string, string>()
      yield* Once.done(once, Exit.succeed("committed"))
      yield* Once.done(once, Exit.fail("rolled back"))
      expect(yield* Effect.exit(Once.wait(once))).toStrictEqual(Exit.succeed("committed"))
    })
  )

  it.effect("answers a failure as the waiter's failure", () =>
    Effect.gen(function* () {
      const once = Once.make<string, string>()
      const waiting = yield* Effect.fork(Once.wait(once))
      yield* Effect.yieldNow()
      yield* Once.done(once, Exit.fail("the commit failed"))
      expect(yield* Fiber.await(waiting)).toStrictEqual(Exit.fail("the commit failed"))
    })
  )

  it.effect("lets go of a fiber interrupted while it waits", () =>
    Effect.gen(function* () {
      const once = Once.make<string>()
      const waiting = yield* Effect.fork(Once.wait(once))
      yield* Effect.yieldNow()
      expect(once.waiters.size).toBe(1)
      yield* Fiber.interrupt(waiting)
      expect(once.waiters.size).toBe(0)
      yield* Once.done(once, Exit.succeed("later"))
      expect(Exit.isInterrupted(yield* Fiber.await(waiting))).toBe(true)
    })
  )
})
