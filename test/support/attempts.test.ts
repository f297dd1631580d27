import { afterEach, describe, expect, it, vi } from "vitest"
import { withinBoundsOnSomeAttempt } from "./attempts.js"

/** Measurements answered in turn, one an attempt; out of bounds above 1.1, like a timing ratio. */
const measurements = (...ratios: ReadonlyArray<number>) => {
  const taken: Array<number> = []
  return {
    taken,
    run: (attempts: number) =>
      withinBoundsOnSomeAttempt({
        label: "pair",
        attempts,
        measure: async (attempt) => {
          taken.push(attempt)
          return ratios[attempt - 1] ?? Number.NaN
        },
        outOfBounds: (ratio) => (ratio <= 1.1 ? [] : [`ratio ${ratio}`])
      })
  }
}

describe("withinBoundsOnSomeAttempt, the retry of the suites that measure the machine", () => {
  const warnings = vi.spyOn(console, "warn").mockImplementation(() => undefined)
  afterEach(() => warnings.mockClear())

  it("answers the first measurement that keeps its bounds, and measures no more", async () => {
    const { taken, run } = measurements(1.02, 1.5)
    expect(await run(3)).toBe(1.02)
    expect(taken).toEqual([1])
    expect(warnings).not.toHaveBeenCalled()
  })

  it("measures again after one out of bounds, and still prints the first one's figures when a later one passes", async () => {
    const { taken, run } = measurements(1.3, 1.05)
    expect(await run(3)).toBe(1.05)
    expect(taken).toEqual([1, 2])
    const printed = warnings.mock.calls.map(([line]) => String(line)).join("\n")
    expect(printed).toContain("attempt 1: ratio 1.3")
    expect(printed).toContain("kept its bounds on attempt 2 of 3")
  })

  it("fails after the last attempt, giving every attempt's figures, the first one's first", async () => {
    const { taken, run } = measurements(1.3, 1.2)
    await expect(run(2)).rejects.toThrow(/out of bounds on all 2 attempts:\nattempt 1: ratio 1.3\nattempt 2: ratio 1.2/)
    expect(taken).toEqual([1, 2])
  })

  it("never retries what the measurement throws: a wrong answer fails at once", async () => {
    let calls = 0
    const run = withinBoundsOnSomeAttempt({
      label: "pair",
      attempts: 3,
      measure: async () => {
        calls++
        throw new Error("answered 500")
      },
      outOfBounds: () => []
    })
    await expect(run).rejects.toThrow("answered 500")
    expect(calls).toBe(1)
  })
})
