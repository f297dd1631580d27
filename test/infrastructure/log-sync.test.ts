import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, FiberId, Option } from "effect"
import * as LogSync from "../../infrastructure/sql/logSync.js"

/** A sync that the test ends: each run is counted, and waits for the test to end it. */
const heldSyncs = Effect.gen(function* () {
  const runs: Array<Deferred.Deferred<void, SqlError>> = []
  const sync = Effect.suspend(() => {
    const run = Deferred.unsafeMake<void, SqlError>(FiberId.none)
    runs.push(run)
    return Deferred.await(run)
  })
  return { runs, ...(yield* LogSync.make(sync)) }
})

/** Time for every fiber that can run to run. */
const settle = Effect.repeatN(Effect.yieldNow(), 20)

const pending = (fiber: Fiber.Fiber<unknown, unknown>) => Effect.map(Fiber.poll(fiber), Option.isNone)

describe("the log's syncs", () => {
  it.scoped("share one sync among those who ask while another is under way, begun once it ends", () =>
    Effect.gen(function* () {
      const { runs, durable } = yield* heldSyncs
      const first = yield* Effect.fork(durable)
      yield* settle
      expect(runs.length).toBe(1)
      const second = yield* Effect.fork(durable)
      const third = yield* Effect.fork(durable)
      yield* settle
      // Both asked after the first sync began: it may not cover them, and no second runs beside it.
      expect(runs.length).toBe(1)
      yield* Deferred.succeed(runs[0] as Deferred.Deferred<void, SqlError>, undefined)
      yield* Fiber.join(first)
      yield* settle
      expect(runs.length).toBe(2)
      expect(yield* pending(second)).toBe(true)
      expect(yield* pending(third)).toBe(true)
      yield* Deferred.succeed(runs[1] as Deferred.Deferred<void, SqlError>, undefined)
      yield* Fiber.join(second)
      yield* Fiber.join(third)
      // Nobody waiting: the next one to ask begins a sync at once.
      const fourth = yield* Effect.fork(durable)
      yield* settle
      expect(runs.length).toBe(3)
      yield* Deferred.succeed(runs[2] as Deferred.Deferred<void, SqlError>, undefined)
      yield* Fiber.join(fourth)
    })
  )

  it.scoped("fail, once one has failed, for everyone who asks after, without syncing again", () =>
    Effect.gen(function* () {
      const { runs, durable, lost } = yield* heldSyncs
      const first = yield* Effect.fork(Effect.exit(durable))
      yield* settle
      const waiting = yield* Effect.fork(Effect.exit(durable))
      yield* settle
      const failure = new SqlError({ message: "the database's log could not be synced to the disk" })
      expect(lost()).toBeUndefined()
      yield* Deferred.fail(runs[0] as Deferred.Deferred<void, SqlError>, failure)
      expect(yield* Fiber.join(first)).toEqual(Exit.fail(failure))
      expect(yield* Fiber.join(waiting)).toEqual(Exit.fail(failure))
      expect(yield* Effect.exit(durable)).toEqual(Exit.fail(failure))
      expect(runs.length).toBe(1)
      expect(lost()).toEqual(Cause.fail(failure))
    })
  )
})
