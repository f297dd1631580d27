import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { killAll, type RunningServer, startServer, temporaryDatabase } from "../support/processes.js"

/*
 * PUBLIC_URL unset follows the port the service listens on (docs/integrating.md, "The typed client" and README "Settings": "For the apps behind
 * Portcullis"): with it fixed at 8000, a service on another port mailed links to nothing and its
 * docs page sent "Try it" requests there (issue 42). startServer listens on a free port, never 8000.
 */
describe("PUBLIC_URL unset, on a port other than 8000", () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer({
      SERVICE_DATABASE_URL: temporaryDatabase(),
      SERVICE_SECRET_KEY: "public-url-secret-key-of-at-least-32-bytes",
      SERVICE_MAILER: "console"
    })
  })
  afterAll(killAll)

  const local = () => `http://localhost:${server.port}`

  it("is the OpenAPI document's server, which the docs page calls", async () => {
    const document = (await (await fetch(`${server.url}/api/v1/auth/openapi.json`)).json()) as {
      readonly servers: ReadonlyArray<{ readonly url: string }>
    }
    expect(server.port).not.toBe(8000)
    expect(document.servers).toEqual([{ url: local() }])
  })

  it("is the base of a mailed link", async () => {
    const answer = await fetch(`${server.url}/api/v1/auth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "public-url@example.com", password: "a long enough password 42" })
    })
    expect(answer.status).toBe(202)
    const deadline = Date.now() + 10_000
    while (!server.output().includes("verify-email?token=") && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(server.output()).toContain(`${local()}/verify-email?token=`)
    expect(server.output()).not.toContain("localhost:8000")
  })
})
