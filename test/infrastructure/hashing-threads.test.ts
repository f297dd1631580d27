import { readdirSync, readFileSync } from "node:fs"
import type { Worker } from "node:worker_threads"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber } from "effect"
import { vi } from "vitest"
import * as HashingThreads from "../../infrastructure/crypto/hashingThreads.js"

// `npm test` and `npm run test:quick` run files one after another in one process: the modules under test may
// have been loaded there already, without the mock below. They are loaded again for this file.
vi.hoisted(() => vi.resetModules())

/** Every thread the pool starts, and the messages it was sent, kept for the tests to look at. */
const started = vi.hoisted(() => [] as Array<{ worker: Worker; sent: Array<unknown> }>)
vi.mock("node:worker_threads", async (original) => {
  const actual = await original<typeof import("node:worker_threads")>()
  class Recorded extends actual.Worker {
    readonly sent: Array<unknown> = []
    constructor(...args: ConstructorParameters<typeof actual.Worker>) {
      super(...args)
      started.push({ worker: this, sent: this.sent })
    }
    override postMessage(message: unknown) {
      this.sent.push(message)
      super.postMessage(message)
    }
  }
  return { ...actual, Worker: Recorded }
})

/** The threads started from now on, as the pool made them. */
const threadsFrom = (first = started.length) => ({ all: () => started.slice(first) })
const hashesSent = (thread: { sent: Array<unknown> }) =>
  thread.sent.filter((message) => (message as { op: string }).op === "hash").length

const cheap = { memoryCost: 1_024, timeCost: 1, parallelism: 1, outputLen: 32 }
const hash = (password: string) => ({ op: "hash", password, options: cheap }) as const
/** A hash slow enough (about 20 ms) that none has ended when a test looks at what the threads were sent. */
const slow = { op: "hash", password: "slow", options: { memoryCost: 19_456, timeCost: 2, parallelism: 1 } } as const

/** The nice value of a thread of this process (field 19 of /proc/self/task/<tid>/stat). */
const niceOf = (thread: string | number) => {
  const stat = readFileSync(`/proc/self/task/${thread}/stat`, "utf8")
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16])
}
const niceValues = () => readdirSync("/proc/self/task").map(niceOf)

describe("the hashing threads", () => {
  it("are one a core, shared among the workers", () => {
    expect(HashingThreads.hashingThreadCount(1, 2)).toBe(2)
    expect(HashingThreads.hashingThreadCount(1, 1)).toBe(1)
    expect(HashingThreads.hashingThreadCount(1, 16)).toBe(16)
    expect(HashingThreads.hashingThreadCount(2, 2)).toBe(1)
    expect(HashingThreads.hashingThreadCount(3, 16)).toBe(6)
    expect(HashingThreads.hashingThreadCount(8, 2)).toBe(1)
  })

  it.scopedLive("give a thread its next task while it runs one, and each task to the least busy thread", () =>
    Effect.gen(function* () {
      const threads = threadsFrom()
      const pool = yield* HashingThreads.make(2)
      const running = yield* Effect.fork(
        Effect.all(
          Array.from({ length: 5 }, () => pool.run(slow)),
          { concurrency: "unbounded" }
        )
      )
      yield* Effect.sleep("2 millis")
      // Two threads, two tasks each: the fifth waits for room.
      expect(threads.all().map(hashesSent)).toEqual([2, 2])
      const hashed = yield* Fiber.join(running)
      expect(hashed.every((stored) => String(stored).startsWith("$argon2id$"))).toBe(true)
      expect(threads.all().map(hashesSent).sort()).toEqual([2, 3])
    })
  )

  it.scopedLive("run below the event loop's priority, which stays as it was", () =>
    Effect.gen(function* () {
      const before = niceValues().filter((nice) => nice === 19).length
      const threads = yield* HashingThreads.make(3)
      expect(yield* threads.lowered).toBe(true)
      expect(niceValues().filter((nice) => nice === 19).length).toBe(before + 3)
      // The main thread's id is the process's; not the first listed, since ids wrap at pid_max.
      expect(niceOf(process.pid)).toBe(0)
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

  it.scopedLive("let a task that fails die, and keep its thread for the next", () =>
    Effect.gen(function* () {
      const threads = threadsFrom()
      const pool = yield* HashingThreads.make(1)
      const [failed, after] = yield* Effect.all(
        [Effect.exit(pool.run({ op: "hash", password: "x", options: { memoryCost: 1 } })), pool.run(hash("after"))],
        { concurrency: "unbounded" }
      )
      expect(Exit.isFailure(failed) && Cause.isDie(failed.cause)).toBe(true)
      expect(String(after).startsWith("$argon2id$")).toBe(true)
      expect(threads.all()).toHaveLength(1)
    })
  )

  it.scopedLive("replace a thread that ends: the tasks it held die, the next run on its replacement", () =>
    Effect.gen(function* () {
      const threads = threadsFrom()
      const pool = yield* HashingThreads.make(1)
      const held = yield* Effect.fork(
        Effect.all(
          Array.from({ length: 2 }, () => Effect.exit(pool.run(slow))),
          { concurrency: "unbounded" }
        )
      )
      yield* Effect.sleep("2 millis")
      yield* Effect.promise(() => (threads.all()[0] as { worker: Worker }).worker.terminate())
      const exits = yield* Fiber.join(held)
      expect(exits.every((exit) => Exit.isFailure(exit) && Cause.isDie(exit.cause))).toBe(true)
      expect(String(yield* pool.run(hash("after")))).toMatch(/^\$argon2id\$/)
      expect(threads.all()).toHaveLength(2)
      expect(yield* pool.lowered).toBe(true)
    })
  )
})
