import { execFileSync } from "node:child_process"
import { createHash, generateKeyPairSync, randomBytes } from "node:crypto"
import { afterAll, describe, expect, it } from "vitest"
import { hostedBrowser } from "../support/hostedBrowser.js"
import { cleanEnv, cli, freePort, killAll, root, startServer, temporaryDatabase } from "../support/processes.js"

/**
 * SIGKILL while a SQLite file's code redemptions are committed together (infrastructure/sql/fast/
 * OidcGrantsSqlite.ts, groupCommit.ts): codes minted beforehand, redeemed twenty at a time as fast
 * as they can be, the service killed mid-load, then started again on the same file. Every refresh
 * token a redemption's answer handed out must still be known: a group answered before its COMMIT
 * returned would lose the grant, and with it the token. A redemption in flight at the kill is in
 * doubt and handed nothing out.
 */

const lanes = 20
const codes = 600
const redirectUri = "https://app.example.com/cb"
const password = "a long enough password, 1!"

afterAll(async () => {
  await killAll()
})

describe("SIGKILL while code redemptions are committed together (SQLite file)", () => {
  it("every refresh token a redemption handed out is still known after the restart", async () => {
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const vars = {
      SERVICE_SECRET_KEY: "sigkill-redemptions-secret-key-of-32-bytes",
      SERVICE_DATABASE_URL: temporaryDatabase(),
      SERVICE_PUBLIC_URL: base,
      SERVICE_OIDC_PROVIDER_ENABLED: "true",
      SERVICE_OIDC_PRIVATE_KEY: generateKeyPairSync("rsa", { modulusLength: 2048 })
        .privateKey.export({ format: "pem", type: "pkcs8" })
        .toString(),
      // The codes wait for their turn while the others are minted.
      SERVICE_OIDC_CODE_TTL_SECONDS: "600",
      SERVICE_AUTH_RATE_LIMIT_ENABLED: "false",
      SERVICE_SEND_VERIFICATION_ON_REGISTER: "false",
      SERVICE_PREVENT_REGISTRATION_ENUMERATION: "false",
      SERVICE_LOG_LEVEL: "error"
    }
    const server = await startServer(vars, { port })
    const client = JSON.parse(
      execFileSync(process.execPath, [cli, "client", "add", "--name", "Kill", "--redirect-uri", redirectUri], {
        cwd: root,
        env: cleanEnv(vars)
      }).toString()
    ) as { client_id: string; client_secret: string }
    const basic = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString("base64")}`
    const auth = (path: string) => new URL(`${base}/api/v1/auth${path}`)
    const email = `redeemer-${Date.now()}@example.com`
    const registered = await fetch(auth("/register"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password })
    })
    expect(registered.status).toBe(201)

    // Codes minted as a browser gets them: signed in and consented the first time only.
    const browser = hostedBrowser(`${base}/api/v1/auth`, { email, password })
    const mint = async () => {
      const verifier = randomBytes(32).toString("base64url")
      const url = auth("/oauth2/authorize")
      url.search = new URLSearchParams({
        client_id: client.client_id,
        redirect_uri: redirectUri,
        response_type: "code",
        scope: "openid offline_access",
        code_challenge: createHash("sha256").update(verifier).digest("base64url"),
        code_challenge_method: "S256"
      }).toString()
      const at = await browser.authorize(url)
      const code = at.searchParams.get("code")
      expect(code).not.toBeNull()
      return { code: code ?? "", verifier }
    }
    const minted: Array<{ readonly code: string; readonly verifier: string }> = []
    for (let n = 0; n < codes; n++) minted.push(await mint())

    const token = (form: Record<string, string>) =>
      fetch(auth("/oauth2/token"), {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", authorization: basic },
        body: new URLSearchParams(form).toString(),
        signal: AbortSignal.timeout(10_000)
      })
    const handedOut: Array<string> = []
    const lane = async () => {
      for (let next = minted.pop(); next !== undefined; next = minted.pop()) {
        const answer = await token({
          grant_type: "authorization_code",
          code: next.code,
          redirect_uri: redirectUri,
          code_verifier: next.verifier
        }).catch(() => undefined)
        // The kill: no answer, in doubt.
        if (answer === undefined) return
        expect(answer.status).toBe(200)
        handedOut.push(((await answer.json()) as { refresh_token: string }).refresh_token)
      }
    }
    const running = Array.from({ length: lanes }, lane)
    await new Promise((resolve) => setTimeout(resolve, 500 + Math.random() * 500))
    server.child.kill("SIGKILL")
    await Promise.all(running)
    // Enough redemptions were acknowledged, many of them in groups, for a lost one to show.
    expect(handedOut.length).toBeGreaterThan(2 * lanes)
    expect(minted.length).toBeGreaterThan(0)

    await startServer(vars, { port })
    const after = await Promise.all(
      handedOut.map(async (refresh_token) => (await token({ grant_type: "refresh_token", refresh_token })).status)
    )
    expect(after.map((status) => (status === 200 ? "known" : status))).toEqual(handedOut.map(() => "known"))
  }, 120_000)
})
