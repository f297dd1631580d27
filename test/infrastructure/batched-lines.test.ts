import { describe, expect, it } from "@effect/vitest"
import { batchedLines } from "../../infrastructure/logging/batchedLines.js"

const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

describe("batchedLines", () => {
  it("writes the lines of one turn of the event loop in one write, in order, each ending with a newline", async () => {
    const writes: Array<string> = []
    const lines = batchedLines((text) => writes.push(text))
    lines.push('{"n":1}')
    lines.push('{"n":2}')
    lines.push('{"n":3}')
    expect(writes).toEqual([])
    await nextTurn()
    expect(writes).toEqual(['{"n":1}\n{"n":2}\n{"n":3}\n'])
    lines.push('{"n":4}')
    await nextTurn()
    expect(writes).toEqual(['{"n":1}\n{"n":2}\n{"n":3}\n', '{"n":4}\n'])
  })

  it("flushes what is queued at once, through another writer when given, and then has nothing left", async () => {
    const writes: Array<string> = []
    const atExit: Array<string> = []
    const lines = batchedLines((text) => writes.push(text))
    lines.push("a")
    lines.push("b")
    lines.flush((text) => atExit.push(text))
    expect(atExit).toEqual(["a\nb\n"])
    await nextTurn()
    expect(writes).toEqual([])
  })
})
