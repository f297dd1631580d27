import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { runCli, runProcess } from "../support/cliRun.js"
import { cleanEnv, cli } from "../support/processes.js"

/**
 * `create-superuser` without `--password` on a real terminal: util-linux `script` gives the CLI a
 * pseudo-terminal, and the password is typed only once each prompt is shown, as a person would
 * (typed earlier, the terminal itself would echo it before the prompt turns echo off).
 */

const script = await runProcess("script", ["--version"]).catch(() => undefined)
const folder = mkdtempSync(join(tmpdir(), "portcullis-prompt-"))
const vars = { SERVICE_DATABASE_URL: `sqlite:${join(folder, "portcullis.db")}` }
const secret = "Tr0ub4dour&3-horse"

afterAll(() => rmSync(folder, { recursive: true, force: true }))

/** Runs the CLI on a pseudo-terminal, answering each prompt that appears with the next of `answers`. */
const onTerminal = (args: string, answers: ReadonlyArray<readonly [prompt: string, typed: string]>) =>
  new Promise<{ readonly status: number | null; readonly screen: string }>((resolve, reject) => {
    const child = spawn("script", ["-qec", `${process.execPath} ${cli} ${args}`, "/dev/null"], {
      env: cleanEnv(vars),
      stdio: "pipe"
    })
    let screen = ""
    const pending = [...answers]
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      screen += chunk
      const next = pending[0]
      if (next !== undefined && screen.includes(next[0])) {
        pending.shift()
        child.stdin.write(`${next[1]}\r`)
      }
    })
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`still waiting after 30 s; the screen so far:\n${screen}`))
    }, 30_000)
    child.once("close", (status) => {
      clearTimeout(timer)
      resolve({ status, screen })
    })
  })

describe.skipIf(script?.status !== 0)("create-superuser's password prompt on a terminal", () => {
  it("shows nothing of what is typed, and the superuser it makes exists", async () => {
    const run = await onTerminal("create-superuser --email prompt@example.com", [
      ["New password", secret],
      ["Repeat the new password", secret]
    ])
    expect(run.status, run.screen).toBe(0)
    // The new user's id is random and may hold three characters of the secret by chance.
    const shown = run.screen.replace(/\([0-9a-f-]{36}\)/g, "(id)")
    for (let at = 0; at + 3 <= secret.length; at++) expect(shown).not.toContain(secret.slice(at, at + 3))
    expect(shown).not.toContain("*".repeat(secret.length))
    const listed = await runCli(["user", "list", "--json"], vars)
    expect(listed.stdout).toContain("prompt@example.com")
  }, 60_000)

  it("refuses two different entries and creates no one", async () => {
    const run = await onTerminal("create-superuser --email differ@example.com", [
      ["New password", secret],
      ["Repeat the new password", `${secret}!`]
    ])
    expect(run.status).toBe(1)
    expect(run.screen).toContain("The two passwords differ")
    const listed = await runCli(["user", "list", "--json"], vars)
    expect(listed.stdout).not.toContain("differ@example.com")
  }, 60_000)
})
