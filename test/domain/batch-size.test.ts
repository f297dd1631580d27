import { describe, expect, it } from "@effect/vitest"
import { BATCH_BUDGET_MILLIS, nextBatchSize } from "../../domain/Retention.js"

describe("nextBatchSize", () => {
  it("halves a batch that overran its budget, down to 10", () => {
    expect(nextBatchSize(1_000, BATCH_BUDGET_MILLIS + 1, 1_000)).toBe(500)
    expect(nextBatchSize(500, 300, 1_000)).toBe(250)
    expect(nextBatchSize(15, 300, 1_000)).toBe(10)
    expect(nextBatchSize(10, 300, 1_000)).toBe(10)
  })

  it("doubles a batch that took under a quarter of the budget, up to the maximum", () => {
    expect(nextBatchSize(250, 1, 1_000)).toBe(500)
    expect(nextBatchSize(600, 0, 1_000)).toBe(1_000)
    expect(nextBatchSize(1_000, 0, 1_000)).toBe(1_000)
  })

  it("keeps a batch within the budget as it is", () => {
    expect(nextBatchSize(300, BATCH_BUDGET_MILLIS / 2, 1_000)).toBe(300)
    expect(nextBatchSize(300, BATCH_BUDGET_MILLIS, 1_000)).toBe(300)
  })
})
