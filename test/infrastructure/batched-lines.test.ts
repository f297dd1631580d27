import { afterEach, beforeEach, describe, expect, it, vi } from "@effect/vitest"
import { batchedLines, FLUSH_AT_BYTES, FLUSH_EVERY_MS } from "../../infrastructure/logging/batchedLines.js"

describe("batchedLines", () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it("writes the lines of FLUSH_EVERY_MS in one write, in order, each ending with a newline", () => {
    const writes: Array<string> = []
    const lines = batchedLines((text) => writes.push(text))
    lines.push('{"n":1}')
    vi.advanceTimersByTime(FLUSH_EVERY_MS - 1)
    // Turns of the event loop go by meanwhile: a batch a turn was a write a request under load.
    lines.push('{"n":2}')
    lines.push('{"n":3}')
    expect(writes).toEqual([])
    vi.advanceTimersByTime(1)
    expect(writes).toEqual(['{"n":1}\n{"n":2}\n{"n":3}\n'])
    lines.push('{"n":4}')
    vi.advanceTimersByTime(FLUSH_EVERY_MS)
    expect(writes).toEqual(['{"n":1}\n{"n":2}\n{"n":3}\n', '{"n":4}\n'])
    vi.advanceTimersByTime(10 * FLUSH_EVERY_MS)
    expect(writes).toHaveLength(2)
  })

  it("writes a batch at once when it reaches FLUSH_AT_BYTES, and the next waits its own interval", () => {
    const writes: Array<string> = []
    const lines = batchedLines((text) => writes.push(text))
    const line = "x".repeat(1023)
    for (let n = 0; n < FLUSH_AT_BYTES / 1024 - 1; n++) lines.push(line)
    expect(writes).toEqual([])
    lines.push(line)
    expect(writes).toEqual([`${line}\n`.repeat(FLUSH_AT_BYTES / 1024)])
    lines.push("after")
    vi.advanceTimersByTime(FLUSH_EVERY_MS - 1)
    expect(writes).toHaveLength(1)
    vi.advanceTimersByTime(1)
    expect(writes[1]).toBe("after\n")
  })

  it("does not hold the process open while lines wait (the exit writes them)", () => {
    vi.useRealTimers()
    const started = vi.spyOn(globalThis, "setTimeout")
    const lines = batchedLines(() => undefined)
    lines.push("waiting")
    const timer = started.mock.results[0]?.value as NodeJS.Timeout | undefined
    started.mockRestore()
    expect(timer?.hasRef()).toBe(false)
    lines.flush()
  })

  it("flushes what is queued at once, through another writer when given, and then has nothing left", () => {
    const writes: Array<string> = []
    const atExit: Array<string> = []
    const lines = batchedLines((text) => writes.push(text))
    lines.push("a")
    lines.push("b")
    lines.flush((text) => atExit.push(text))
    expect(atExit).toEqual(["a\nb\n"])
    vi.advanceTimersByTime(FLUSH_EVERY_MS)
    expect(writes).toEqual([])
  })
})
