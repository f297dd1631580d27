import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort, killAll, type RunningServer, startServer } from "../support/processes.js"

/**
 * Runs where the PostgreSQL suites run (TEST_DATABASE_URL set), as root with the server binaries
 * installed: a private cluster on a spare port, which the test stops and starts under a running
 * Portcullis.
 */
const binaries = "/usr/lib/postgresql/15/bin"
const enabled = process.env.TEST_DATABASE_URL !== undefined && process.getuid?.() === 0

const asPostgres = (command: string, args: ReadonlyArray<string>) =>
  execFileSync("runuser", ["-u", "postgres", "--", join(binaries, command), ...args], {
    stdio: "pipe",
    timeout: 60_000
  })

describe.skipIf(!enabled)("a PostgreSQL that stops under a running service", () => {
  const folder = mkdtempSync(join(tmpdir(), "portcullis-pg-"))
  const data = join(folder, "data")
  let port = 0
  let server: RunningServer
  const startDatabase = () =>
    asPostgres("pg_ctl", [
      "-D",
      data,
      "-o",
      `-p ${port} -k ${folder} -c listen_addresses=127.0.0.1`,
      "-l",
      join(folder, "log"),
      "-w",
      "start"
    ])
  const stopDatabase = () => asPostgres("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"])

  beforeAll(async () => {
    execFileSync("chown", ["postgres", folder])
    asPostgres("initdb", ["-D", data, "-A", "trust", "-U", "postgres"])
    port = await freePort()
    startDatabase()
    server = await startServer({
      SERVICE_SECRET_KEY: "database-failure-secret-key-of-32-bytes!",
      SERVICE_DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres`,
      SERVICE_PREVENT_REGISTRATION_ENUMERATION: "false",
      SERVICE_AUTH_RATE_LIMIT_ENABLED: "false",
      SERVICE_LOG_LEVEL: "error"
    })
  }, 90_000)

  afterAll(async () => {
    await killAll()
    try {
      stopDatabase()
    } catch {
      // already stopped
    }
    rmSync(folder, { recursive: true, force: true })
  })

  const post = (path: string, body: unknown, token?: string) =>
    fetch(`${server.url}/api/v1/auth${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
      },
      body: JSON.stringify(body)
    })
  const me = (token: string) => fetch(`${server.url}/api/v1/auth/me`, { headers: { authorization: `Bearer ${token}` } })
  const password = "correct horse battery staple"

  it("answers 503 while it is down, never crashes, recovers by itself, and loses no acknowledged registration", async () => {
    expect((await post("/register", { email: "before@example.com", password })).status).toBe(201)
    const token = (
      (await (await post("/login", { email: "before@example.com", password })).json()) as { access_token: string }
    ).access_token

    stopDatabase()
    const down = await me(token)
    expect(down.status).toBe(503)
    expect(((await down.json()) as { code: string }).code).toBe("ServiceUnavailableError")
    expect((await post("/register", { email: "during@example.com", password })).status).toBe(503)
    expect((await fetch(`${server.url}/readyz`)).status).toBe(503)
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
    expect(server.child.exitCode).toBeNull()

    startDatabase()
    let ready = 0
    for (let i = 0; i < 50 && ready !== 200; i++) {
      ready = (await fetch(`${server.url}/readyz`)).status
      if (ready !== 200) await new Promise((resolve) => setTimeout(resolve, 200))
    }
    expect(ready).toBe(200)
    expect((await me(token)).status).toBe(200)
    expect((await post("/register", { email: "after@example.com", password })).status).toBe(201)
    // Every registration that was acknowledged (201) can sign in; the refused one never existed.
    for (const email of ["before@example.com", "after@example.com"]) {
      expect((await post("/login", { email, password })).status).toBe(200)
    }
    expect((await post("/login", { email: "during@example.com", password })).status).toBe(401)
  }, 90_000)
})
