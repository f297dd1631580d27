import { type ChildProcess, execFile, spawn } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { cleanEnv, exited, freePort, root, temporaryDatabase } from "../support/processes.js"

let child: ChildProcess | undefined

afterEach(async () => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) {
    child.kill("SIGKILL")
    await exited(child, 5_000).catch(() => undefined)
  }
})

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: "127.0.0.1", port })
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

describe("npm start in a checkout", () => {
  it.each(["SIGTERM", "SIGINT"] as const)(
    "serves without compiling an unchanged checkout, and %s to npm stops the server promptly",
    async (signal) => {
      const port = await freePort()
      // The test run's global setup has just built dist/, so nothing is to compile.
      const started = spawn("npm", ["start"], {
        cwd: root,
        env: cleanEnv({
          SERVICE_PORT: String(port),
          SERVICE_DATABASE_URL: temporaryDatabase(),
          SERVICE_SECRET_KEY: "npm-start-secret-key-of-at-least-32-bytes"
        }),
        stdio: ["ignore", "pipe", "pipe"]
      })
      child = started
      let output = ""
      for (const stream of [started.stdout, started.stderr]) {
        stream?.on("data", (chunk: Buffer) => {
          output += chunk.toString("utf8")
        })
      }
      const deadline = Date.now() + 25_000
      let status = 0
      while (status !== 200 && Date.now() < deadline && started.exitCode === null) {
        status = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(1_000) }).then(
          (response) => response.status,
          () => 0
        )
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100))
      }
      expect(status, output).toBe(200)
      expect(output).not.toContain("compiling")

      started.kill(signal)
      await exited(started, 5_000)
      expect(await accepts(port)).toBe(false)
      expect(output).toContain("stopped: drained 0 in-flight requests")
    }
  )
})

/**
 * `npm start` in a copy of the checkout's start-up machinery (package.json, scripts/, the tsconfig
 * files, node_modules) whose CLI is one small module: the real scripts and the real tsc, without
 * touching the sources or the dist/ that other tests run.
 */
describe("npm start in a checkout whose sources changed", { timeout: 120_000 }, () => {
  let project = ""

  const main = (version: string) => {
    mkdirSync(join(project, "main"), { recursive: true })
    writeFileSync(
      join(project, "main/cli.ts"),
      `console.log(\`main ${version} \${process.argv.slice(2).join(" ")}\`)\n`
    )
  }

  /** npm start to its end: what it printed. Awaited, since tsc would starve vitest's worker. */
  const npmStart = () =>
    new Promise<{ readonly stdout: string; readonly stderr: string }>((resolve, reject) =>
      execFile("npm", ["start"], { cwd: project, env: cleanEnv({}), timeout: 60_000 }, (error, stdout, stderr) =>
        error === null ? resolve({ stdout, stderr }) : reject(new Error(`${error.message}\n${stdout}${stderr}`))
      )
    )

  beforeAll(() => {
    project = mkdtempSync(join(tmpdir(), "portcullis-npm-start-"))
    for (const file of [
      "package.json",
      "tsconfig.json",
      "tsconfig.build.json",
      "scripts/build.mjs",
      "scripts/start.mjs"
    ]) {
      mkdirSync(join(project, file, ".."), { recursive: true })
      copyFileSync(join(root, file), join(project, file))
    }
    symlinkSync(join(root, "node_modules"), join(project, "node_modules"))
  })

  afterAll(() => {
    if (project !== "") rmSync(project, { recursive: true, force: true })
  })

  it("compiles before serving when a source is newer than the last build, and runs what it compiled", async () => {
    main("1")
    const first = await npmStart()
    expect(first.stderr).toContain("compiling")
    expect(first.stdout).toContain("main 1 serve")

    const unchanged = await npmStart()
    expect(unchanged.stderr).not.toContain("compiling")

    main("2")
    // A second past the build, as an edit made after it would be, whatever the file system's resolution.
    const later = new Date(statSync(join(project, "dist/.build-stamp")).mtimeMs + 1_000)
    utimesSync(join(project, "main/cli.ts"), later, later)
    const changed = await npmStart()
    expect(changed.stderr).toContain("compiling")
    expect(changed.stdout).toContain("main 2 serve")
  })
})
