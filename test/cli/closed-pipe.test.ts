import { spawn } from "node:child_process"
import { describe, expect, it } from "vitest"
import { cleanEnv, cli, temporaryDatabase } from "../support/processes.js"

/**
 * `portcullis … | head`: the reader closes the pipe before the command has printed all it had.
 * That is the end of the output, not a failure: status 0 and nothing on standard error (once an
 * unhandled EPIPE with its stack trace).
 */
const closedEarly = (args: ReadonlyArray<string>, vars: Readonly<Record<string, string>> = {}) =>
  new Promise<{ readonly code: number | null; readonly stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], {
      env: cleanEnv({ PORTCULLIS_IGNORE_DOTENV: "1", ...vars }),
      stdio: ["ignore", "pipe", "pipe"]
    })
    // Closed before the first byte: the command's first write meets a pipe nobody reads.
    child.stdout.destroy()
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    child.once("close", (code) => resolve({ code, stderr }))
  })

describe("a command whose reader stops early", () => {
  it("audit export ends with status 0 and no trace", async () => {
    const vars = {
      SERVICE_DATABASE_URL: temporaryDatabase(),
      SERVICE_SECRET_KEY: "closed-pipe-secret-key-of-32-bytes-or-more"
    }
    // A first entry to print: the superuser's creation.
    const created = ["create-superuser", "--email", "root@example.com", "--password", "correct horse battery staple"]
    expect(await closedEarly(created, vars)).toEqual({ code: 0, stderr: "" })
    expect(await closedEarly(["audit", "export", "--since", "2020-01-01", "--format", "jsonl"], vars)).toEqual({
      code: 0,
      stderr: ""
    })
  })
})
