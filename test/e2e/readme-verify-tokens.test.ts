import { generateKeyPairSync, type KeyObject } from "node:crypto"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { decodeProtectedHeader } from "jose"
import { afterAll, describe, expect, it } from "vitest"
import { runProcess } from "../support/cliRun.js"
import { cleanEnv, killAll, root, startServer, temporaryDatabase } from "../support/processes.js"

afterAll(killAll)

/** The README's example, exactly as a reader sees it. */
const example = () => {
  const readme = readFileSync(join(root, "README.md"), "utf8")
  const block = /<!-- verify-tokens:start -->\s*```js\n([\s\S]*?)```\s*<!-- verify-tokens:end -->/.exec(readme)
  if (block?.[1] === undefined) throw new Error("README has no verify-tokens example")
  return block[1]
}

/**
 * Runs the example in a process of its own against the server at `url`: it knows nothing but the
 * JWKS URL. Inside the project, so that its `import ... from "jose"` resolves.
 */
const verifyElsewhere = (url: string, token: string) => {
  const dir = join(root, ".cache", "test-readme-verify")
  mkdirSync(dir, { recursive: true })
  const file = join(dir, "verify-token.mjs")
  // The only change: the port of this test's server for the README's 8000.
  writeFileSync(file, example().replaceAll("http://127.0.0.1:8000", url))
  return runProcess(process.execPath, [file, token], { env: cleanEnv({}) })
}

const pem = (key: KeyObject) => key.export({ format: "pem", type: "pkcs8" }).toString()
const prefix = "/api/v1/auth"

const post = (url: string, path: string, body: unknown, token?: string) =>
  fetch(`${url}${prefix}${path}`, {
    method: "POST",
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
const me = (url: string, token: string) =>
  fetch(`${url}${prefix}/me`, { headers: { authorization: `Bearer ${token}` } }).then((response) => response.status)

describe("the README's 'How apps verify tokens' example", () => {
  it("verifies access tokens through the JWKS alone, across a key rotation; revocation is only seen by /me", async () => {
    const first = generateKeyPairSync("ed25519")
    const second = generateKeyPairSync("ed25519")
    const vars = {
      SERVICE_SECRET_KEY: "verify-tokens-secret-key-of-at-least-32-bytes",
      SERVICE_DATABASE_URL: temporaryDatabase(),
      SERVICE_SEND_VERIFICATION_ON_REGISTER: "false",
      SERVICE_LOG_LEVEL: "warning",
      SERVICE_JWT_ALGORITHM: "EdDSA"
    }
    const credentials = { email: "app-user@example.com", password: "correct horse battery staple" }
    const signIn = async (url: string) => {
      const response = await post(url, "/login", credentials)
      expect(response.status).toBe(200)
      return (await response.json()) as { access_token: string; refresh_token: string; user: { id: string } }
    }

    const before = await startServer({ ...vars, SERVICE_JWT_PRIVATE_KEY: pem(first.privateKey) })
    expect((await post(before.url, "/register", credentials)).status).toBe(202)
    const old = await signIn(before.url)
    const checked = await verifyElsewhere(before.url, old.access_token)
    expect(checked.stderr).toBe("")
    expect(checked.status).toBe(0)
    expect(checked.stdout).toContain(`user ${old.user.id}`)
    // A refresh token is not signed with the published key: the example refuses it.
    expect((await verifyElsewhere(before.url, old.refresh_token)).status).not.toBe(0)
    await before.stop()

    // Rotation: the second key signs, the first one's public half still verifies.
    const firstPublic = JSON.stringify({ keys: [first.publicKey.export({ format: "jwk" })] })
    const after = await startServer({
      ...vars,
      SERVICE_JWT_PRIVATE_KEY: pem(second.privateKey),
      SERVICE_JWT_VERIFY_KEYS: firstPublic
    })
    const current = await signIn(after.url)
    expect(decodeProtectedHeader(current.access_token).kid).not.toBe(decodeProtectedHeader(old.access_token).kid)
    for (const token of [old.access_token, current.access_token]) {
      const run = await verifyElsewhere(after.url, token)
      expect(run.status, run.stderr).toBe(0)
      expect(run.stdout).toContain(`user ${old.user.id}`)
      expect(await me(after.url, token)).toBe(200)
    }

    // Logout ends the old session: /me refuses its access token at once; local verification
    // cannot see that, and accepts it until it expires, as the README says.
    expect((await post(after.url, "/logout", undefined, old.access_token)).status).toBe(204)
    expect(await me(after.url, old.access_token)).toBe(401)
    expect((await verifyElsewhere(after.url, old.access_token)).status).toBe(0)
    expect(await me(after.url, current.access_token)).toBe(200)
    await after.stop()

    // Once the first key is dropped, its tokens are refused everywhere.
    const dropped = await startServer({ ...vars, SERVICE_JWT_PRIVATE_KEY: pem(second.privateKey) })
    expect((await verifyElsewhere(dropped.url, old.access_token)).status).not.toBe(0)
    expect((await verifyElsewhere(dropped.url, current.access_token)).status).toBe(0)
    await dropped.stop()
  }, 120_000)
})
