import { writeSync } from "node:fs"

export interface BatchedLines {
  /** Queues a line; the queue is written once the current turn of the event loop is over. */
  readonly push: (line: string) => void
  /** Writes what is queued now, through `write` when given instead of the batch's own. */
  readonly flush: (write?: (text: string) => void) => void
}

/**
 * Log lines written in batches: one write per turn of the event loop instead of one per line.
 * A write to a pipe or a file is synchronous in Node, so a line a request cost every request a
 * system call on the event loop. `write` gets whole lines, each ending with a newline.
 */
export const batchedLines = (write: (text: string) => void): BatchedLines => {
  let queued: Array<string> = []
  const flush = (through = write) => {
    if (queued.length === 0) return
    const text = `${queued.join("\n")}\n`
    queued = []
    through(text)
  }
  return {
    push: (line) => {
      if (queued.length === 0) setImmediate(flush)
      queued.push(line)
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
