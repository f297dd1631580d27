import { readdirSync, readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber } from "effect"
import * as HashingThreads from "../../infrastructure/crypto/hashingThreads.js"

const cheap = { memoryCost: 1_024, timeCost: 1, parallelism: 1, outputLen: 32 }
const hash = (password: string) => ({ op: "hash", password, options: cheap }) as const

/** The nice value of each of this process's threads (field 19 of /proc/self/task/<tid>/stat). */
const niceValues = () =>
  readdirSync("/proc/self/task").map((thread) => {
    const stat = readFileSync(`/proc/self/task/${thread}/stat`, "utf8")
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16])
  })

describe("the hashing threads", () => {
  it("are one a core plus two, shared among the workers", () => {
    expect(HashingThreads.hashingThreadCount(1, 2)).toBe(4)
    expect(HashingThreads.hashingThreadCount(1, 1)).toBe(3)
    expect(HashingThreads.hashingThreadCount(1, 16)).toBe(18)
    expect(HashingThreads.hashingThreadCount(2, 2)).toBe(2)
    expect(HashingThreads.hashingThreadCount(4, 16)).toBe(5)
    expect(HashingThreads.hashingThreadCount(8, 2)).toBe(1)
  })

  it.scopedLive("run below the event loop's priority, which stays as it was", () =>
    Effect.gen(function* () {
      const before = niceValues().filter((nice) => nice === 19).length
      const threads = yield* HashingThreads.make(3)
      expect(yield* threads.lowered).toBe(true)
      expect(niceValues().filter((nice) => nice === 19).length).toBe(before + 3)
      expect(niceValues()[0]).toBe(0)
    })
  )

  it.scopedLive("take more tasks than threads at once, each waiting for a free thread", () =>
    Effect.gen(function* () {
      const threads = yield* HashingThreads.make(2)
      const hashed = yield* Effect.all(
        Array.from({ length: 12 }, (_, index) => threads.run(hash(`password ${index}`))),
        { concurrency: "unbounded" }
      )
      const checks = yield* Effect.all(
        hashed.map((stored, index) =>
          threads.run({ op: "verifyArgon2", hashed: String(stored), password: `password ${index}` })
        ),
        { concurrency: "unbounded" }
      )
      expect(checks).toEqual(Array(12).fill(true))
      expect(yield* threads.run({ op: "verifyArgon2", hashed: String(hashed[0]), password: "wrong" })).toBe(false)
      expect(yield* threads.run({ op: "verifyArgon2", hashed: "$argon2id$garbage", password: "x" })).toBe(false)
      expect(yield* threads.run({ op: "verifyBcrypt", hashed: "$2b$garbage", password: "x" })).toBe(false)
    })
  )

  it.scopedLive("finish a hash whose caller stopped waiting, on the same thread, before they take the next", () =>
    Effect.gen(function* () {
      const threads = yield* HashingThreads.make(2)
      const threadIds = () => new Set(readdirSync("/proc/self/task"))
      const before = threadIds()
      const abandoned = yield* Effect.forkDaemon(
        Effect.all(
          Array.from({ length: 4 }, () => threads.run(hash("abandoned"))),
          { concurrency: "unbounded" }
        )
      )
      yield* Effect.sleep("5 millis")
      yield* Fiber.interrupt(abandoned)
      const after = yield* Effect.all(
        Array.from({ length: 4 }, () => threads.run(hash("after"))),
        { concurrency: "unbounded" }
      )
      expect(after.every((stored) => String(stored).startsWith("$argon2id$"))).toBe(true)
      // No thread was ended and replaced for the abandoned hashes.
      expect(threadIds()).toEqual(before)
    })
  )

  it.scopedLive("replace a thread that fails: its task dies, the others go on", () =>
    Effect.gen(function* () {
      const threads = yield* HashingThreads.make(2)
      const failed = yield* Effect.exit(threads.run({ op: "hash", password: "x", options: { memoryCost: 1 } }))
      expect(Exit.isFailure(failed) && Cause.isDie(failed.cause)).toBe(true)
      const after = yield* Effect.all(
        Array.from({ length: 4 }, () => threads.run(hash("after"))),
        { concurrency: "unbounded" }
      )
      expect(after.every((stored) => String(stored).startsWith("$argon2id$"))).toBe(true)
      expect(yield* threads.lowered).toBe(true)
    })
  )
})
