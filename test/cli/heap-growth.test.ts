import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { boundHeapGrowth, HEAP_GROWING_PERCENT } from "../../main/heapGrowth.js"

/**
 * A heap whose garbage is promoted before it dies (each array outlives two young collections),
 * as a serving process's is under load: the most it ever holds, with `flags` set at run time
 * as `serve` sets them.
 */
const peakHeap = async (flags: string | undefined) => {
  const script = `
    if (${JSON.stringify(flags ?? "")}) require("node:v8").setFlagsFromString(${JSON.stringify(flags ?? "")})
    const ring = new Array(300).fill(null)
    let peak = 0
    for (let i = 0; i < 6000; i++) {
      ring[i % ring.length] = Array.from({ length: 1000 }, (_, j) => ({ j }))
      if (i % 50 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed)
    }
    console.log(peak)`
  const { stdout } = await promisify(execFile)(process.execPath, ["-e", script])
  return Number(stdout.trim())
}

describe("the serving process's heap growth", () => {
  it("is set to grow the old generation by half before collecting it, which bounds the heap at run time", async () => {
    const set: Array<string> = []
    expect(boundHeapGrowth([], (flags) => set.push(flags))).toBe(true)
    expect(set).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`])
    const [own, bounded] = [await peakHeap(undefined), await peakHeap(set[0])]
    // V8's own factor lets the same garbage take about 40% more (83 against 60 MB where measured).
    expect(bounded).toBeLessThan(own * 0.85)
  })

  it("leaves an operator's own value on node's command line alone", () => {
    const set: Array<string> = []
    expect(boundHeapGrowth(["--heap-growing-percent=20"], (flags) => set.push(flags))).toBe(false)
    expect(boundHeapGrowth(["--heap_growing_percent=80"], (flags) => set.push(flags))).toBe(false)
    expect(boundHeapGrowth(["--max-old-space-size=512"], (flags) => set.push(flags))).toBe(true)
    expect(set).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`])
  })
})
