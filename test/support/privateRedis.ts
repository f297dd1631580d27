import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { exited, freePort } from "./processes.js"

/**
 * Sends one command in RESP and answers the first line of the reply ("+OK", "+PONG", ":0"…), or
 * undefined when nothing answers within half a second.
 */
export const redisCommand = (port: number, ...args: ReadonlyArray<string>) =>
  new Promise<string | undefined>((resolve) => {
    const socket = connect(port, "127.0.0.1")
    const done = (line: string | undefined) => {
      socket.destroy()
      resolve(line)
    }
    socket.setTimeout(500)
    socket.once("connect", () =>
      socket.write(`*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join("")}`)
    )
    socket.once("data", (data) => done(data.toString().split("\r\n")[0]))
    socket.once("error", () => done(undefined))
    socket.once("timeout", () => done(undefined))
  })

export interface PrivateRedis {
  readonly port: number
  readonly url: string
  /** Starts redis-server and waits until it answers PING. */
  readonly start: () => Promise<void>
  /** SIGTERM: a graceful shutdown, which keeps what it persists (when persistent). */
  readonly stop: () => Promise<void>
  /** SIGKILL: gone at once, with whatever it held in memory. */
  readonly kill: () => Promise<void>
  /** Stops it if running and deletes its folder. */
  readonly remove: () => Promise<void>
}

/**
 * A redis-server of the test's own on a spare port, which the test stops, kills and starts under
 * a running service. Not persistent, it keeps nothing on disk, so every start is an empty Redis;
 * persistent, it writes an append-only file synced on every write, so a stop and start keeps
 * every key.
 */
export const privateRedis = async ({ persistent = false } = {}): Promise<PrivateRedis> => {
  const port = await freePort()
  const folder = mkdtempSync(join(tmpdir(), "portcullis-redis-"))
  const persistence = persistent ? ["--appendonly", "yes", "--appendfsync", "always"] : ["--appendonly", "no"]
  let child: ChildProcess | undefined

  const start = async () => {
    child = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--dir", folder, "--save", "", ...persistence],
      { stdio: "ignore" }
    )
    const deadline = Date.now() + 10_000
    while ((await redisCommand(port, "PING")) !== "+PONG") {
      if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${port}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  const end = (signal: NodeJS.Signals) => async () => {
    const running = child
    child = undefined
    if (running === undefined) return
    running.kill(signal)
    await exited(running, 5_000)
  }
  const kill = end("SIGKILL")
  const remove = async () => {
    await kill()
    rmSync(folder, { recursive: true, force: true })
  }
  return { port, url: `redis://127.0.0.1:${port}`, start, stop: end("SIGTERM"), kill, remove }
}
