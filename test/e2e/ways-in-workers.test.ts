import { randomBytes } from "node:crypto"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeOAuthProvider, fakeOAuthProvider } from "../support/FakeOAuthProvider.js"
import { scratchDatabase } from "../support/postgres.js"
import { killAll, type RunningServer, startServer } from "../support/processes.js"
import { startSmtpSink } from "../support/SmtpSink.js"
import {
  type CreationOptionsLike,
  type RequestOptionsLike,
  SoftwareAuthenticator
} from "../support/SoftwareAuthenticator.js"

/**
 * The takeover and the sign-in race of docs/behaviour.md, "Ways in", on the production shape: one
 * server with two worker processes over PostgreSQL and Redis, the OAuth provider a fake in this
 * process, mail to an SMTP sink. The in-process suites (test/http/ways-in*.test.ts) hold the same
 * rules on every store; here requests of one round land on both workers.
 */

const databaseUrl = process.env.TEST_DATABASE_URL
const redisUrl = process.env.TEST_REDIS_URL
const enabled = databaseUrl !== undefined && redisUrl !== undefined

const database = scratchDatabase("portcullis_ways")

const password = "correct horse battery staple"
const REDIRECT = "https://app.example/oauth/callback"
const client = { id: "google-client", secret: "google secret" }
const github = { id: "github-client", secret: "github secret" }
const ROUNDS = 6
const SIGN_INS = 8
const SPREAD = 4

interface Reply {
  readonly status: number
  readonly body: Record<string, unknown>
}

describe.skipIf(!enabled)("ways in with two workers on PostgreSQL and Redis", () => {
  let server: RunningServer
  let fake: FakeOAuthProvider
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>
  const scope = Effect.runSync(Scope.make())

  beforeAll(async () => {
    await database.create()
    fake = await Effect.runPromise(Scope.extend(fakeOAuthProvider([client, github]), scope))
    smtp = await startSmtpSink()
    const google = fake.endpoints("google")
    const githubAt = fake.endpoints("github")
    server = await startServer({
      SERVICE_SECRET_KEY: "ways-in-workers-secret-key-of-at-least-32-bytes",
      SERVICE_DATABASE_URL: database.url,
      SERVICE_REDIS_URL: redisUrl ?? "",
      SERVICE_WORKERS: "2",
      // Neither limits nor lockout are the subject: concurrent attempts at one account count toward
      // its lock before any of them is decided, and the change itself is one of them.
      SERVICE_AUTH_RATE_LIMIT_ENABLED: "false",
      SERVICE_LOCKOUT_ENABLED: "false",
      SERVICE_LOG_LEVEL: "warning",
      SERVICE_SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
      SERVICE_OAUTH_GOOGLE_CLIENT_ID: client.id,
      SERVICE_OAUTH_GOOGLE_CLIENT_SECRET: client.secret,
      SERVICE_OAUTH_GOOGLE_REDIRECT_URIS: REDIRECT,
      SERVICE_OAUTH_GOOGLE_AUTHORIZATION_ENDPOINT: google.authorization,
      SERVICE_OAUTH_GOOGLE_TOKEN_ENDPOINT: google.token,
      SERVICE_OAUTH_GOOGLE_USERINFO_ENDPOINT: google.userinfo,
      SERVICE_OAUTH_GITHUB_CLIENT_ID: github.id,
      SERVICE_OAUTH_GITHUB_CLIENT_SECRET: github.secret,
      SERVICE_OAUTH_GITHUB_REDIRECT_URIS: REDIRECT,
      SERVICE_OAUTH_GITHUB_AUTHORIZATION_ENDPOINT: githubAt.authorization,
      SERVICE_OAUTH_GITHUB_TOKEN_ENDPOINT: githubAt.token,
      SERVICE_OAUTH_GITHUB_USERINFO_ENDPOINT: githubAt.userinfo,
      SERVICE_OAUTH_GITHUB_EMAILS_ENDPOINT: githubAt.emails ?? "",
      SERVICE_PASSKEY_ENABLED: "true",
      SERVICE_PASSKEY_RP_ID: "localhost",
      SERVICE_PASSKEY_RP_NAME: "Portcullis tests",
      SERVICE_PASSKEY_ORIGINS: "http://localhost:8000",
      SERVICE_PASSKEY_CHALLENGE_BACKEND: "redis"
    })
  }, 60_000)

  afterAll(async () => {
    await killAll()
    await smtp?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
    if (enabled) await database.drop()
  })

  const call = async (method: string, path: string, init: { body?: unknown; token?: string } = {}): Promise<Reply> => {
    const headers: Record<string, string> = {}
    if (init.body !== undefined) headers["content-type"] = "application/json"
    if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`
    const response = await fetch(`${server.url}/api/v1/auth${path}`, {
      method,
      headers,
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
    })
    return {
      status: response.status,
      body: ((await response.json().catch(() => ({}))) ?? {}) as Record<string, unknown>
    }
  }
  const newEmail = (label: string) => `${label}-${randomBytes(4).toString("hex")}@example.com`
  const register = async (email: string) =>
    expect((await call("POST", "/register", { body: { email, password } })).status).toBe(202)
  const login = (email: string, secret = password) => call("POST", "/login", { body: { email, password: secret } })
  const alive = async (tokens: ReadonlyArray<string>) =>
    (await Promise.all(tokens.map((token) => call("GET", "/me", { token })))).filter((reply) => reply.status === 200)
      .length

  /** Sign-ins spread over the change's few milliseconds; the access tokens of those that succeeded. */
  const racingSignIns = async (email: string) => {
    const replies = await Promise.all(
      Array.from({ length: SIGN_INS }, async (_, index) => {
        await new Promise((resolve) => setTimeout(resolve, index * SPREAD))
        return login(email)
      })
    )
    return replies.filter((reply) => reply.status === 200).map((reply) => String(reply.body.access_token))
  }

  /** A GitHub account of the squatter's own (its own address): a sign-in, or with a token a link. */
  const throughGithub = async (who: { readonly id: number; readonly email: string }, token?: string) => {
    const flow = token === undefined ? "/oauth/github" : "/oauth/github/link"
    const auth = token === undefined ? {} : { token }
    const started = await call("GET", `${flow}/authorize?redirect_uri=${encodeURIComponent(REDIRECT)}`, auth)
    expect(started.status).toBe(200)
    const url = new URL(String(started.body.authorization_url))
    const challenge = url.searchParams.get("code_challenge")
    const code = fake.issueCode({
      clientId: github.id,
      redirectUri: REDIRECT,
      userinfo: { id: who.id, login: "squatter", name: "Squatter", avatar_url: null },
      emails: [{ email: who.email, primary: true, verified: true }],
      ...(challenge === null ? {} : { codeChallenge: challenge })
    })
    return call("POST", `${flow}/callback`, {
      body: { code, state: url.searchParams.get("state"), binding: started.body.binding },
      ...auth
    })
  }

  const passkeySignIn = async (authenticator: SoftwareAuthenticator) => {
    const begun = await call("POST", "/passkeys/authenticate/begin")
    expect(begun.status).toBe(200)
    const options = begun.body as unknown as RequestOptionsLike & { challenge_key: string }
    const credential = authenticator.authenticate(options)
    return call("POST", "/passkeys/authenticate/complete", {
      body: { challenge_key: options.challenge_key, credential }
    })
  }

  /** The owner signing in with Google, which vouches for `email`. */
  const ownerSignIn = async (email: string) => {
    const started = await call("GET", `/oauth/google/authorize?redirect_uri=${encodeURIComponent(REDIRECT)}`)
    expect(started.status).toBe(200)
    const url = new URL(String(started.body.authorization_url))
    const code = fake.issueCode({
      clientId: client.id,
      redirectUri: REDIRECT,
      userinfo: { sub: randomBytes(6).toString("hex"), email, email_verified: true, name: "Owner", picture: null },
      ...(url.searchParams.get("code_challenge") === null
        ? {}
        : { codeChallenge: url.searchParams.get("code_challenge") ?? "" })
    })
    return call("POST", "/oauth/google/callback", {
      body: { code, state: url.searchParams.get("state"), binding: started.body.binding }
    })
  }

  it("no sign-in racing a password change keeps a session, on either worker", async () => {
    let started = 0
    for (let round = 0; round < ROUNDS; round++) {
      const email = newEmail("race")
      await register(email)
      const owner = await login(email)
      const [tokens, changed] = await Promise.all([
        racingSignIns(email),
        call("POST", "/change-password", {
          token: String(owner.body.access_token),
          body: { current_password: password, new_password: `changed passphrase ${round}` }
        })
      ])
      expect(changed.status).toBe(200)
      started += tokens.length
      expect(await alive(tokens)).toBe(0)
    }
    expect(started).toBeGreaterThan(0)
  }, 120_000)

  it("no sign-in racing a reset from the mailed link keeps a session, on either worker", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const email = newEmail("reset")
      await register(email)
      expect((await call("POST", "/password-reset/request", { body: { email } })).status).toBe(202)
      let token = ""
      for (let wait = 0; wait < 100 && token === ""; wait++) {
        const mail = smtp.received.find((sent) => sent.to.includes(email) && /reset/i.test(sent.subject))
        token = mail?.text.match(/token=([\w.-]+)/)?.[1] ?? ""
        if (token === "") await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(token).not.toBe("")
      const [tokens, reset] = await Promise.all([
        racingSignIns(email),
        call("POST", "/password-reset/confirm", { body: { token, new_password: `reset passphrase ${round}` } })
      ])
      expect(reset.status).toBe(200)
      expect(await alive(tokens)).toBe(0)
    }
  }, 120_000)

  it("the owner's takeover removes the squatter's passkey and linked provider, on either worker", async () => {
    const victim = newEmail("victim")
    await register(victim)
    const token = String((await login(victim)).body.access_token)
    const authenticator = new SoftwareAuthenticator()
    const begun = await call("POST", "/passkeys/register/begin", { token })
    expect(begun.status).toBe(200)
    const options = begun.body as unknown as CreationOptionsLike & { challenge_key: string }
    const added = await call("POST", "/passkeys/register/complete", {
      token,
      body: { challenge_key: options.challenge_key, credential: authenticator.register(options), device_name: "key" }
    })
    expect(added.status).toBe(201)
    const own = { id: 700_000 + Math.floor(Math.random() * 100_000), email: newEmail("squatter") }
    expect((await throughGithub(own, token)).status).toBe(200)
    expect((await passkeySignIn(authenticator)).status).toBe(200)

    const owner = await ownerSignIn(victim)
    expect(owner.status).toBe(200)
    const ownerId = (owner.body.user as { id: string }).id
    // Each answered by whichever worker takes it: none reaches the owner's account.
    for (let attempt = 0; attempt < 4; attempt++) {
      expect((await passkeySignIn(authenticator)).status).toBe(401)
      expect((await login(victim)).status).toBe(401)
      const elsewhere = await throughGithub(own)
      expect(elsewhere.status).toBe(200)
      expect((elsewhere.body.user as { id: string }).id).not.toBe(ownerId)
    }
    expect((await call("GET", "/me", { token })).status).toBe(401)
  }, 120_000)

  it("the owner's takeover leaves a squatter racing it no session and no passkey or password", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const victim = newEmail("victim")
      await register(victim)
      const [tokens, owner] = await Promise.all([racingSignIns(victim), ownerSignIn(victim)])
      expect(owner.status).toBe(200)
      expect((owner.body.user as { is_verified: boolean }).is_verified).toBe(true)
      expect(await alive(tokens)).toBe(0)
      // The squatter's password is gone, whichever worker answers.
      for (let attempt = 0; attempt < 4; attempt++) expect((await login(victim)).status).toBe(401)
    }
  }, 120_000)
})
