import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type PrivatePostgres, privatePostgres, privatePostgresPossible } from "../support/privatePostgres.js"
import { killAll, type RunningServer, startServer } from "../support/processes.js"

/** A private cluster on a spare port (see privatePostgres), which the test stops and starts under a running Portcullis. */
describe.skipIf(!privatePostgresPossible)("a PostgreSQL that stops under a running service", () => {
  let database: PrivatePostgres | undefined
  let server: RunningServer

  beforeAll(async () => {
    database = await privatePostgres()
    server = await startServer({
      SERVICE_SECRET_KEY: "database-failure-secret-key-of-32-bytes!",
      SERVICE_DATABASE_URL: database.url,
      SERVICE_PREVENT_REGISTRATION_ENUMERATION: "false",
      SERVICE_AUTH_RATE_LIMIT_ENABLED: "false",
      SERVICE_LOG_LEVEL: "error"
    })
  }, 90_000)

  afterAll(async () => {
    await killAll()
    await database?.remove()
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

    await database?.stop()
    const down = await me(token)
    expect(down.status).toBe(503)
    expect(((await down.json()) as { code: string }).code).toBe("ServiceUnavailableError")
    expect((await post("/register", { email: "during@example.com", password })).status).toBe(503)
    expect((await fetch(`${server.url}/readyz`)).status).toBe(503)
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
    expect(server.child.exitCode).toBeNull()

    await database?.start()
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
