import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/** The repository, and the compiled CLI that test/support/global-setup.ts builds once per run. */
export const root = fileURLToPath(new URL("../..", import.meta.url))
export const cli = join(root, "dist/main/cli.js")

/*
 * Ports are drawn below the kernel's ephemeral range (32768–60999 on Linux, 49152 and up on
 * macOS and Windows): a port the kernel handed out by listen(0) and then freed can be taken by
 * any outgoing connection (a Redis or PostgreSQL client in a parallel test) before the child
 * binds it, which once failed CI with EADDRINUSE. Below the range only another explicit bind can
 * take it.
 */
const lowestPort = 20_000
const ephemeralStart = 32_768

const listensOn = (port: number) =>
  new Promise<boolean>((resolve, reject) => {
    const server = createServer()
    server.once("error", (error: NodeJS.ErrnoException) =>
      error.code === "EADDRINUSE" || error.code === "EACCES" ? resolve(false) : reject(error)
    )
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
  })

/** A port nothing listens on right now, outside the range outgoing connections draw from. */
export const freePort = async (): Promise<number> => {
  for (;;) {
    const port = lowestPort + Math.floor(Math.random() * (ephemeralStart - lowestPort))
    if (await listensOn(port)) return port
  }
}

export const temporaryDatabase = () => `sqlite:${join(mkdtempSync(join(tmpdir(), "portcullis-")), "db.sqlite")}`

/**
 * Only PATH and HOME from this process, so no stray SERVICE_ variable leaks into the child, and
 * PORTCULLIS_IGNORE_DOTENV=1, so no developer's .env in the working directory (the repository,
 * often) does either. A test of the .env file itself passes `readingDotenv` among `vars`.
 */
export const cleanEnv = (vars: Readonly<Record<string, string>>) => ({
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? "",
  PORTCULLIS_IGNORE_DOTENV: "1",
  ...vars
})

/** For `cleanEnv`: the child reads the .env file of its working directory, as outside the tests. */
export const readingDotenv = { PORTCULLIS_IGNORE_DOTENV: "0" } as const

export interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

/** How the process ended; rejects if it is still running after `withinMs`. */
export const exited = (child: ChildProcess, withinMs: number) =>
  new Promise<Exit>((resolve, reject) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode })
      return
    }
    const timer = setTimeout(() => reject(new Error(`the process is still running after ${withinMs} ms`)), withinMs)
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal })
    })
  })

export interface RunningServer {
  readonly child: ChildProcess
  readonly port: number
  readonly url: string
  readonly output: () => string
  /** SIGTERM, then how it exited (within 5 s). */
  readonly stop: () => Promise<Exit>
}

const running = new Set<ChildProcess>()

/** Kills whatever a test left running; for afterEach/afterAll. */
export const killAll = async () => {
  for (const child of running) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL")
      await exited(child, 5_000).catch(() => undefined)
    }
  }
  running.clear()
}

/** Starts `portcullis serve` on a free port and waits until /healthz answers 200. */
export const startServer = async (
  vars: Readonly<Record<string, string>>,
  options: { readonly cwd?: string; readonly args?: ReadonlyArray<string>; readonly port?: number } = {}
): Promise<RunningServer> => {
  // A caller that must name the port in the settings (an origin, say) picks it beforehand.
  if (options.port !== undefined) return startServerOn(options.port, vars, options)
  // Another worker may bind the same free port first; a port of our own choosing is drawn again.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServerOn(await freePort(), vars, options)
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt === 3) throw error
    }
  }
}

class PortTaken extends Error {}

const startServerOn = async (
  port: number,
  vars: Readonly<Record<string, string>>,
  options: { readonly cwd?: string; readonly args?: ReadonlyArray<string> }
): Promise<RunningServer> => {
  const child = spawn(process.execPath, [cli, "serve", ...(options.args ?? [])], {
    cwd: options.cwd ?? root,
    env: cleanEnv({ SERVICE_PORT: String(port), ...vars }),
    stdio: ["ignore", "pipe", "pipe"]
  })
  running.add(child)
  let output = ""
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8")
  })
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8")
  })
  const url = `http://127.0.0.1:${port}`
  const stop = async () => {
    child.kill("SIGTERM")
    const exit = await exited(child, 5_000)
    running.delete(child)
    return exit
  }
  // A wait, not a bound on start-up: several workers starting beside a full test run can take a while.
  const deadline = Date.now() + 40_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      running.delete(child)
      const message = `serve exited (${child.exitCode ?? child.signalCode}) before answering:\n${output}`
      throw output.includes("the address is already in use") ? new PortTaken(message) : new Error(message)
    }
    try {
      const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) })
      if (response.status === 200) return { child, port, url, output: () => output, stop }
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  await killAll()
  throw new Error(`serve did not answer /healthz within 40 s:\n${output}`)
}

/**
 * A module hook for `node --import=<hook>` (written into `folder`) that appends to `log` the URL
 * of every module resolved whose URL contains `fragment`: which packages a command loads.
 */
export const moduleWatcher = (folder: string, log: string, fragment: string): string => {
  const hook = join(folder, "watch-modules.mjs")
  const resolver = `import { appendFileSync } from "node:fs"
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context)
  if (resolved.url.includes(${JSON.stringify(fragment)})) appendFileSync(${JSON.stringify(log)}, resolved.url + "\\n")
  return resolved
}`
  writeFileSync(
    hook,
    `import { register } from "node:module"\nregister(${JSON.stringify(`data:text/javascript,${encodeURIComponent(resolver)}`)})\n`
  )
  return hook
}
