import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import Database from "better-sqlite3"
import { type Duration, Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { restAsLong, untilNoneLeft } from "../../application/batches.js"

/**
 * A sweep of a large backlog runs batch after batch, each a write transaction on the SQLite file.
 * Another process that needs the write lock meanwhile (a `portcullis` command: its start-up
 * migrates) polls for it within its busy timeout. Found at a million users: with only a yield
 * between batches, `portcullis prune --dry-run` failed with SQLITE_BUSY while the serving
 * process swept. Resting as long as each batch took leaves it its turn. (The converse, that a
 * bare yield starves the other process, is not asserted: the busy handler's retries can land in
 * the short gap between two batches, so it holds most of the time, not always.)
 */

const folder = mkdtempSync(join(tmpdir(), "portcullis-lock-"))
afterAll(() => rmSync(folder, { recursive: true, force: true }))

/** Another process's write on the file, with a busy timeout of `timeoutMs`: whether it got the lock. */
const writeFromAnotherProcess = (file: string, timeoutMs: number) =>
  new Promise<string>((resolve, reject) => {
    const script = `
      const Database = require("better-sqlite3")
      const db = new Database(${JSON.stringify(file)}, { timeout: ${timeoutMs} })
      try { db.prepare("INSERT INTO other (at) VALUES (?)").run(Date.now()); console.log("written") }
      catch (error) { console.log(error.code) }`
    const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] })
    let output = ""
    child.stdout.on("data", (chunk) => {
      output += chunk
    })
    child.on("error", reject)
    child.on("exit", () => resolve(output.trim()))
  })

/**
 * A sweep of `batches` write transactions of about 25 ms each on its own connection, paused by
 * `pause`, while another process writes; answers what the other process got.
 */
const sweepBeside = async (name: string, pause: (elapsed: Duration.Duration) => Effect.Effect<void>) => {
  const file = join(folder, `${name}.db`)
  const db = new Database(file)
  db.pragma("journal_mode = WAL")
  db.exec("CREATE TABLE swept (x INTEGER); CREATE TABLE other (at INTEGER)")
  const hold = db.transaction(() => {
    db.prepare("INSERT INTO swept (x) VALUES (1)").run()
    const until = performance.now() + 25
    while (performance.now() < until) {
      // The batch's statement at work, holding the write lock.
    }
  })
  let left = 100
  const sweep = Effect.runPromise(
    untilNoneLeft(
      () =>
        Effect.sync(() => {
          if (left === 0) return 0
          hold()
          left--
          return 1
        }),
      1,
      pause
    )
  )
  // Started once the sweep holds the lock between short breaks.
  await new Promise((resolve) => setTimeout(resolve, 200))
  const other = await writeFromAnotherProcess(file, 1_000)
  await sweep
  db.close()
  return other
}

describe("a sweep beside another process's write on the same SQLite file", () => {
  it("resting as long as each batch took, the other process gets the lock within its busy timeout", async () => {
    expect(await sweepBeside("resting", restAsLong)).toBe("written")
  }, 30_000)
})
