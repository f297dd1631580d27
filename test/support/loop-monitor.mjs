/**
 * Preloaded into a server process (NODE_OPTIONS="--import <this file>") so that it measures
 * itself without any change to the product: every second it appends a JSON line to
 * LOOP_MONITOR_FILE with the event-loop delay of that second and of the current phase, and the
 * process's memory.
 *
 * SIGUSR2 ends a phase: its delay figures and loop utilisation are taken at once; then the heap is collected in
 * full, twice a second apart, and a second later, once V8 has handed the freed pages back to
 * the system, a line marked `mark: true` gives them with the memory still in use, and the next
 * phase starts. Without the collection, RSS follows how far V8 let garbage pile up before its
 * last collection, which depends on how busy the machine was, not on what the server keeps.
 *
 * Plain JavaScript: node 20 preloads no TypeScript.
 */
import { appendFileSync } from "node:fs"
import { monitorEventLoopDelay, performance } from "node:perf_hooks"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

const file = process.env.LOOP_MONITOR_FILE
if (file !== undefined && file !== "") {
  // A collector for this file only: a context made after the flag is set has `gc`, the server's does not.
  setFlagsFromString("--expose-gc")
  const collect = runInNewContext("gc")
  // A 10 ms timer each, whose samples are the time between two firings: the delay, the blocking
  // a request would suffer, is what exceeds the 10 ms. Two monitors, since node cannot add a
  // delay histogram into another.
  const resolution = 10
  const interval = monitorEventLoopDelay({ resolution })
  const phase = monitorEventLoopDelay({ resolution })
  interval.enable()
  phase.enable()
  let phaseNumber = 0
  // The share of the phase the loop spent running callbacks rather than waiting for I/O.
  let phaseStart = performance.eventLoopUtilization()

  const ms = (nanoseconds) => Math.max(0, Math.round(nanoseconds / 1e4 - resolution * 100) / 100)
  const figures = (histogram) =>
    histogram.count === 0
      ? { count: 0, p50: 0, p99: 0, max: 0 }
      : {
          count: histogram.count,
          p50: ms(histogram.percentile(50)),
          p99: ms(histogram.percentile(99)),
          max: ms(histogram.max)
        }

  const write = (line) => {
    const memory = process.memoryUsage()
    const full = {
      t: Date.now(),
      mark: false,
      phase: phaseNumber,
      interval: figures(interval),
      run: figures(phase),
      rss: memory.rss,
      heapUsed: memory.heapUsed,
      heapTotal: memory.heapTotal,
      external: memory.external,
      ...line
    }
    appendFileSync(file, `${JSON.stringify(full)}\n`)
  }

  setInterval(() => {
    write({})
    interval.reset()
  }, 1_000).unref()

  process.on("SIGUSR2", () => {
    const ended = {
      mark: true,
      phase: phaseNumber,
      run: figures(phase),
      utilization: performance.eventLoopUtilization(phaseStart).utilization
    }
    phaseNumber++
    collect()
    setTimeout(() => {
      collect()
      setTimeout(() => {
        interval.reset()
        phase.reset()
        phaseStart = performance.eventLoopUtilization()
        write(ended)
      }, 1_000)
    }, 1_000)
  })
}
