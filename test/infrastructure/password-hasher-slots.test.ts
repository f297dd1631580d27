import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { vi } from "vitest"
import * as PasswordHasherArgon2 from "../../infrastructure/crypto/PasswordHasherArgon2.js"

/** How many argon2 calls are running at once, and the most there ever were. */
const running = vi.hoisted(() => ({ now: 0, peak: 0 }))

vi.mock("@node-rs/argon2", async (importOriginal) => {
  const real = await importOriginal<typeof import("@node-rs/argon2")>()
  const counted =
    <A extends ReadonlyArray<unknown>, B>(call: (...args: A) => Promise<B>) =>
    async (...args: A) => {
      running.now++
      running.peak = Math.max(running.peak, running.now)
      try {
        return await call(...args)
      } finally {
        running.now--
      }
    }
  return { ...real, hash: counted(real.hash), verify: counted(real.verify) }
})

const cheap = { memoryCost: 1_024, timeCost: 1, parallelism: 1 }
const password = Redacted.make("correct horse battery staple")

describe("PasswordHasherArgon2 hashing slots", () => {
  it.each([
    [2, 4, 2],
    [8, 4, 3],
    [1, 4, 1],
    [4, 1, 1],
    [16, 64, 16]
  ])("%i cores and a pool of %i threads leave %i slots", (cores, pool, slots) => {
    expect(PasswordHasherArgon2.hashingSlots(cores, pool)).toBe(slots)
  })

  it.live("never runs more hashes and verifications at once than its slots: the others wait their turn", () =>
    Effect.gen(function* () {
      const hasher = yield* PasswordHasherArgon2.make(cheap, 2)
      const stored = yield* hasher.hash(password)
      running.peak = 0
      const results = yield* Effect.all(
        Array.from({ length: 12 }, (_, index) =>
          index % 2 === 0 ? hasher.hash(password) : hasher.verify(stored, password)
        ),
        { concurrency: "unbounded" }
      )
      expect(results.filter((result) => result === true)).toHaveLength(6)
      expect(running.peak).toBe(2)
    })
  )
})
