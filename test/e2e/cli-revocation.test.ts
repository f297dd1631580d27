import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { Client, Ledger } from "../support/faults.js"
import { cleanEnv, cli, killAll, root, startServer, temporaryDatabase } from "../support/processes.js"

const run = promisify(execFile)

afterAll(killAll)

describe("portcullis user update on a running server whose revocation list is in memory", () => {
  it("deactivating then reactivating a user does not revive the access tokens of the sessions the deactivation ended", async () => {
    const vars = {
      SERVICE_SECRET_KEY: "cli-revocation-secret-key-of-at-least-32-bytes",
      SERVICE_DATABASE_URL: temporaryDatabase(),
      SERVICE_PREVENT_REGISTRATION_ENUMERATION: "false",
      SERVICE_SEND_VERIFICATION_ON_REGISTER: "false",
      SERVICE_LOG_LEVEL: "warning"
    }
    const server = await startServer(vars)
    const ledger = new Ledger(new Client(server.url))
    const { client } = ledger
    const account = await ledger.register("operator-target", [201])
    if (account === undefined) throw new Error(ledger.problems.join("; "))
    const signIn = async () => {
      const tokens = await ledger.signIn(account, [200])
      if (tokens === undefined) throw new Error(ledger.problems.join("; "))
      return tokens
    }
    const sessions = [await signIn(), await signIn()]
    const me = (access: string) => client.auth("GET", "/me", { token: access })
    for (const session of sessions) expect((await me(session.access)).status).toBe(200)

    // The operator's process, not the server: it ends the sessions in the database they share.
    const update = (active: "true" | "false") =>
      run(process.execPath, [cli, "user", "update", "--email", account.email, "--active", active], {
        cwd: root,
        env: cleanEnv(vars),
        timeout: 20_000
      })
    await update("false")
    for (const session of sessions) expect((await me(session.access)).status, "while deactivated").toBe(401)
    await update("true")

    for (const session of sessions) {
      expect((await me(session.access)).status, "an ended session's access token, once reactivated").toBe(401)
      const renewed = await client.auth("POST", "/refresh", { json: { refresh_token: session.refresh } })
      expect(renewed.status, "an ended session's refresh token, once reactivated").toBe(401)
    }
    // Reactivated: the user signs in again, and only the new session is served.
    expect((await me((await signIn()).access)).status).toBe(200)
    expect(server.child.exitCode).toBeNull()
  }, 60_000)
})
