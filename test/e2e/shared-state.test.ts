import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { scratchDatabase } from "../support/postgres.js"
import { killAll, type RunningServer, startServer, temporaryDatabase } from "../support/processes.js"

const databaseUrl = process.env.TEST_DATABASE_URL
const redisUrl = process.env.TEST_REDIS_URL
const enabled = databaseUrl !== undefined && redisUrl !== undefined

/** A database of its own for this file, created and dropped around it. */
const database = scratchDatabase("portcullis_e2e")

const password = "correct horse battery staple"
/**
 * A client address of its own per call site (through the trusted proxy header): a random /64,
 * so that limits never mix with other tests or earlier runs sharing the same Redis.
 */
const client = () => `2001:db8:${randomBytes(2).toString("hex")}:${randomBytes(2).toString("hex")}::1`

const call = async (server: RunningServer, path: string, init: { body?: unknown; token?: string; ip: string }) => {
  const headers: Record<string, string> = { "x-forwarded-for": init.ip }
  if (init.body !== undefined) headers["content-type"] = "application/json"
  if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`
  const response = await fetch(`${server.url}/api/v1/auth${path}`, {
    method: init.body === undefined && path === "/me" ? "GET" : "POST",
    headers,
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
  })
  return { status: response.status, body: (await response.json().catch(() => undefined)) as Record<string, string> }
}

describe.skipIf(!enabled)("two server processes on one PostgreSQL and Redis", () => {
  let a: RunningServer
  let b: RunningServer

  beforeAll(async () => {
    await database.create()
    const env = {
      SERVICE_SECRET_KEY: "shared-state-secret-key-of-at-least-32-bytes",
      SERVICE_DATABASE_URL: database.url,
      SERVICE_REDIS_URL: redisUrl ?? "",
      SERVICE_TRUSTED_PROXY_HEADERS: "x-forwarded-for",
      SERVICE_LOG_LEVEL: "warning"
    }
    a = await startServer(env)
    b = await startServer(env)
  }, 60_000)

  afterAll(async () => {
    await killAll()
    if (enabled) await database.drop()
  })

  const signUp = async () => {
    const email = `shared-${randomBytes(4).toString("hex")}@example.com`
    expect((await call(a, "/register", { body: { email, password }, ip: client() })).status).toBe(202)
    return email
  }
  const signIn = async (server: RunningServer, email: string) => {
    const reply = await call(server, "/login", { body: { email, password }, ip: client() })
    expect(reply.status).toBe(200)
    return { access: reply.body.access_token ?? "", refresh: reply.body.refresh_token ?? "" }
  }

  it("a logout on A refuses the access token on B", async () => {
    const email = await signUp()
    const session = await signIn(a, email)
    expect((await call(b, "/me", { token: session.access, ip: client() })).status).toBe(200)
    expect((await call(a, "/logout", { token: session.access, body: {}, ip: client() })).status).toBe(204)
    const refused = await call(b, "/me", { token: session.access, ip: client() })
    expect(refused.status).toBe(401)
    expect(refused.body.code).toBe("TokenBlacklistedError")
  })

  it("a refresh rotated on A and replayed on B burns the family on both", async () => {
    const email = await signUp()
    const session = await signIn(a, email)
    const rotated = await call(a, "/refresh", { body: { refresh_token: session.refresh }, ip: client() })
    expect(rotated.status).toBe(200)
    expect((await call(b, "/refresh", { body: { refresh_token: session.refresh }, ip: client() })).status).toBe(401)
    for (const server of [a, b]) {
      expect((await call(server, "/me", { token: rotated.body.access_token ?? "", ip: client() })).status).toBe(401)
      expect(
        (await call(server, "/refresh", { body: { refresh_token: rotated.body.refresh_token }, ip: client() })).status
      ).toBe(401)
    }
  })

  it("one rate-limit bucket counts the requests sent to both", async () => {
    const ip = client()
    // A fresh identifier: lockout counters live in the shared Redis across runs.
    const body = { email: `nobody-${randomBytes(4).toString("hex")}@example.com`, password: "wrong password" }
    for (const server of [a, b, a, b, a]) {
      expect((await call(server, "/login", { body, ip })).status).toBe(401)
    }
    expect((await call(b, "/login", { body, ip })).status).toBe(429)
    expect((await call(a, "/login", { body, ip })).status).toBe(429)
  })
})

describe.skipIf(redisUrl === undefined)("SERVICE_WORKERS=2", () => {
  it("serves with two worker processes on one port, shares limits through Redis, and stops them all on SIGTERM", async () => {
    const server = await startServer({
      SERVICE_SECRET_KEY: "workers-secret-key-of-at-least-32-bytes!!",
      SERVICE_DATABASE_URL: temporaryDatabase(),
      SERVICE_REDIS_URL: redisUrl ?? "",
      SERVICE_TRUSTED_PROXY_HEADERS: "x-forwarded-for",
      SERVICE_WORKERS: "2"
    })
    const children = () => {
      try {
        return execFileSync("pgrep", ["-P", String(server.child.pid)], { encoding: "utf8" })
          .trim()
          .split("\n")
      } catch {
        return []
      }
    }
    expect(children()).toHaveLength(2)
    // Register is limited to 3 a minute per client: the workers take turns, the count is shared.
    const ip = client()
    const statuses: Array<number> = []
    for (let i = 0; i < 4; i++) {
      const email = `workers-${randomBytes(4).toString("hex")}@example.com`
      const reply = await fetch(`${server.url}/api/v1/auth/register`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": ip },
        body: JSON.stringify({ email, password })
      })
      statuses.push(reply.status)
    }
    expect(statuses).toEqual([202, 202, 202, 429])
    const exit = await server.stop()
    expect(exit.code === 0 || exit.signal !== null).toBe(true)
    expect(children()).toEqual([])
  }, 60_000)
})
