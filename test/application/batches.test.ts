import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { untilNoneLeft } from "../../application/batches.js"

describe("untilNoneLeft", () => {
  it.effect("goes batch after batch until one finds nothing, smaller while batches overrun their budget", () =>
    Effect.gen(function* () {
      let left = 3_000
      const sizes: Array<number> = []
      // A slow store: a batch takes a tenth of a millisecond a row, by the test's clock.
      const batch = (size: number) =>
        Effect.gen(function* () {
          sizes.push(size)
          const taken = Math.min(size, left)
          left -= taken
          yield* TestClock.adjust(size / 10)
          return taken
        })
      const total = yield* untilNoneLeft(batch, 1_000)
      expect(total).toBe(3_000)
      expect(left).toBe(0)
      // 1,000 rows took 100 ms: the next is 500 (50 ms, within the budget), and it stays there.
      expect(sizes.slice(0, 3)).toEqual([1_000, 500, 500])
      expect(sizes.at(-1)).toBe(500)
      expect(Math.max(...sizes.slice(1))).toBe(500)
    })
  )

  it.effect("a fast store keeps the largest batch", () =>
    Effect.gen(function* () {
      let left = 2_500
      const sizes: Array<number> = []
      const total = yield* untilNoneLeft(
        (size) =>
          Effect.sync(() => {
            sizes.push(size)
            const taken = Math.min(size, left)
            left -= taken
            return taken
          }),
        1_000
      )
      expect(total).toBe(2_500)
      expect(sizes).toEqual([1_000, 1_000, 1_000, 1_000])
    })
  )
})
