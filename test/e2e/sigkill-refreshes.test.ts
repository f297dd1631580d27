import { afterAll, describe, expect, it } from "vitest"
import { freePort, killAll, startServer, temporaryDatabase } from "../support/processes.js"

/**
 * SIGKILL while a SQLite file's refreshes are committed together (infrastructure/sql/fast/
 * groupCommit.ts): forty sessions refreshing as fast as they can, the service killed mid-load,
 * then started again on the same file. Every refresh token an answer handed out must still be
 * known: a group answered before its COMMIT returned would lose it.
 *
 * The request in flight at the kill is in doubt: if its group was committed, the last token handed
 * out has been rotated meanwhile, and within REFRESH_REUSE_GRACE_SECONDS presenting it again
 * answers the pair its rotation issued (200) instead of ending the session; if it was not, the
 * token rotates now (200). A lost acknowledged rotation answers 401 "Unknown refresh token".
 */

const sessions = 40

afterAll(async () => {
  await killAll()
})

interface Answer {
  readonly status: number
  readonly body: Record<string, unknown>
}

const post = async (url: string, json: unknown): Promise<Answer> => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(json),
    signal: AbortSignal.timeout(10_000)
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

describe("SIGKILL while refreshes are committed together (SQLite file)", () => {
  it("every refresh token an answer handed out is still known after the restart", async () => {
    const port = await freePort()
    const vars = {
      SERVICE_SECRET_KEY: "sigkill-refreshes-secret-key-of-32-bytes!",
      SERVICE_DATABASE_URL: temporaryDatabase(),
      SERVICE_REFRESH_REUSE_GRACE_SECONDS: "300",
      SERVICE_AUTH_RATE_LIMIT_ENABLED: "false",
      SERVICE_MAX_LOGIN_ATTEMPTS: "1000",
      SERVICE_SEND_VERIFICATION_ON_REGISTER: "false",
      SERVICE_PREVENT_REGISTRATION_ENUMERATION: "false",
      SERVICE_LOG_LEVEL: "error"
    }
    const server = await startServer(vars, { port })
    const auth = (path: string) => `http://127.0.0.1:${port}/api/v1/auth${path}`
    const account = { email: `refresher-${Date.now()}@example.com`, password: "a long enough password, 1!" }
    expect((await post(auth("/register"), account)).status).toBe(201)
    const latest: Array<string> = []
    for (let session = 0; session < sessions; session++) {
      const signedIn = await post(auth("/login"), account)
      expect(signedIn.status).toBe(200)
      latest.push(String(signedIn.body.refresh_token))
    }

    let acknowledged = 0
    const chain = async (session: number) => {
      for (;;) {
        const answer = await post(auth("/refresh"), { refresh_token: latest[session] }).catch(() => undefined)
        // The kill: no answer, in doubt.
        if (answer === undefined) return
        expect(answer.status).toBe(200)
        latest[session] = String(answer.body.refresh_token)
        acknowledged++
      }
    }
    const chains = Array.from({ length: sessions }, (_, session) => chain(session))
    await new Promise((resolve) => setTimeout(resolve, 1_500 + Math.random() * 1_000))
    server.child.kill("SIGKILL")
    await Promise.all(chains)
    // Enough refreshes were acknowledged, many of them in groups, for a lost one to show.
    expect(acknowledged).toBeGreaterThan(2 * sessions)

    await startServer(vars, { port })
    const after = await Promise.all(latest.map((token) => post(auth("/refresh"), { refresh_token: token })))
    expect(after.map((answer) => (answer.status === 200 ? "known" : String(answer.body.detail)))).toEqual(
      latest.map(() => "known")
    )
  }, 120_000)
})
