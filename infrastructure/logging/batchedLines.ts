import { writeSync } from "node:fs"

export interface BatchedLines {
  /** Queues a line; the queue is written within `FLUSH_EVERY_MS`, or at once when it holds `FLUSH_AT_BYTES`. */
  readonly push: (line: string) => void
  /** Writes what is queued now, through `write` when given instead of the batch's own. */
  readonly flush: (write?: (text: string) => void) => void
}

/** How long a line may wait for the lines after it. */
export const FLUSH_EVERY_MS = 25

/** What a batch holds at most before it is written without waiting: a pipe's buffer on Linux. */
export const FLUSH_AT_BYTES = 64 * 1024

/**
 * Log lines written in batches: one write for every line of `FLUSH_EVERY_MS` instead of one a
 * line. A write to a pipe or a file is synchronous in Node: a line a request cost every request
 * a system call on the event loop, and so did a batch a turn of the loop, when a turn under load
 * answers one or two requests. `write` gets whole lines, each ending with a newline.
 */
export const batchedLines = (write: (text: string) => void): BatchedLines => {
  let queued: Array<string> = []
  let bytes = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  const flush = (through = write) => {
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
    if (queued.length === 0) return
    const text = `${queued.join("\n")}\n`
    queued = []
    bytes = 0
    through(text)
  }
  return {
    push: (line) => {
      queued.push(line)
      bytes += line.length + 1
      if (bytes >= FLUSH_AT_BYTES) flush()
      // The timer does not hold the process open: what is queued at its exit is written then.
      else if (timer === undefined) timer = setTimeout(flush, FLUSH_EVERY_MS).unref()
    },
    flush
  }
}

let stdout: BatchedLines | undefined

/**
 * Standard output's batch, made on first use. What is still queued when the process exits,
 * whatever ends it, is written synchronously: the event loop no longer runs then.
 */
export const stdoutLines = (): BatchedLines => {
  if (stdout === undefined) {
    const lines = batchedLines((text) => process.stdout.write(text))
    process.on("exit", () => lines.flush((text) => writeSync(1, text)))
    stdout = lines
  }
  return stdout
}
