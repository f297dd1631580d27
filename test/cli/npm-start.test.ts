import { type ChildProcess, spawn } from "node:child_process"
import { connect } from "node:net"
import { afterEach, describe, expect, it } from "@effect/vitest"
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
