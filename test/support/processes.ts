import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

export const root = fileURLToPath(new URL("../..", import.meta.url))
export const cli = join(root, "dist/interfaces/cli/main.js")

/** A port nobody listens on right now. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))))
    })
  })

export const temporaryDatabase = () => `sqlite:${join(mkdtempSync(join(tmpdir(), "portcullis-")), "db.sqlite")}`

/** Only PATH and HOME from this process, so no stray SERVICE_ variable leaks into the child. */
export const cleanEnv = (env: Record<string, string>) => ({
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? "",
  ...env
})

export interface RunningServer {
  readonly url: string
  readonly process: ChildProcess
  readonly output: () => string
  readonly stop: () => Promise<void>
}

/** Starts `portcullis serve` and waits until /healthz answers. */
export const startServer = async (env: Record<string, string>): Promise<RunningServer> => {
  const port = await freePort()
  const child = spawn(process.execPath, [cli, "serve"], {
    env: cleanEnv({ SERVICE_PORT: String(port), ...env }),
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout.on("data", (chunk) => (output += chunk))
  child.stderr.on("data", (chunk) => (output += chunk))
  const url = `http://127.0.0.1:${port}`
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      child.once("exit", () => resolve())
      child.kill("SIGTERM")
    })
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${output}`)
    try {
      if ((await fetch(`${url}/healthz`)).ok) return { url, process: child, output: () => output, stop }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  await stop()
  throw new Error(`server did not answer /healthz:\n${output}`)
}
