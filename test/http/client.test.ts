import { generateKeyPairSync } from "node:crypto"
import * as Cookies from "@effect/platform/Cookies"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer, Redacted, Ref } from "effect"
import { Accounts } from "../../application/Accounts.js"
import { features } from "../../composition/features.js"
import * as Client from "../../interfaces/http/client.js"
import { password, uniqueEmail } from "../support/flows.js"
import { passkeyEnv } from "../support/passkeys.js"
import * as TestApp from "../support/TestApp.js"

/**
 * The typed client (portcullis/client) against a running service: every call goes through real
 * HTTP, and every failure comes back as the route's declared error, decoded from its problem.
 */

const secret = Redacted.make(password)

/** A client of the test service; its access token is whatever `token` holds when a call is made. */
const clientOf = (options: Omit<Client.ClientOptions, "baseUrl"> = {}) =>
  Effect.flatMap(TestApp.TestApp, (app) => Client.make({ baseUrl: app.url, ...options }))

const withFetch = <A, E>(service: Layer.Layer<A, E>) => Layer.merge(service, FetchHttpClient.layer)

const signUp = (client: Client.PortcullisClient, email = uniqueEmail("client")) =>
  Effect.gen(function* () {
    yield* client.auth.register({ payload: { email: Client.Email.make(email), password: secret } })
    return yield* client.auth.login({ payload: { identifier: email, password: secret } })
  })

describe("the typed client in bearer mode", () => {
  layer(withFetch(TestApp.layer("memory:", { SERVICE_PREVENT_REGISTRATION_ENUMERATION: "false" })), {
    excludeTestServices: true
  })((it) => {
    it.effect("registers, signs in, reads /me, lists sessions, refreshes and signs out", () =>
      Effect.gen(function* () {
        let token: string | undefined
        const client = yield* clientOf({ accessToken: () => token })
        const email = uniqueEmail("client")
        const user = yield* client.auth.register({ payload: { email: Client.Email.make(email), password: secret } })
        expect(user).toMatchObject({ email, is_active: true, is_verified: false })

        const signedIn = yield* client.auth.login({ payload: { identifier: email, password: secret } })
        expect(signedIn.user.email).toBe(email)
        token = signedIn.access_token
        expect((yield* client.profile.me()).email).toBe(email)

        const sessions = yield* client.sessions.list({ urlParams: {} })
        expect(sessions).toHaveLength(1)
        // A second sign-in, then pages of one: the Link header names the next.
        const other = yield* client.auth.login({ payload: { identifier: email, password: secret } })
        const [page, response] = yield* client.sessions.list({ urlParams: { limit: 1 }, withResponse: true })
        expect(page.map((session) => session.current)).toEqual([true])
        const next = /cursor=([^&>]+)/.exec(response.headers.link ?? "")?.[1]
        expect(next).toBeDefined()
        const rest = yield* client.sessions.list({
          urlParams: { limit: 1, cursor: Client.SessionCursor.make(decodeURIComponent(next ?? "")) }
        })
        expect(rest.map((session) => session.family_id)).not.toContain(page[0]?.family_id)
        expect(rest).toHaveLength(1)
        expect(other.access_token).not.toBe(token)

        const pair = yield* client.auth.refresh({ payload: { refresh_token: signedIn.refresh_token ?? "" } })
        expect(pair.refresh_token).not.toBe(signedIn.refresh_token)
        token = pair.access_token
        expect((yield* client.profile.me()).email).toBe(email)

        yield* client.auth.logout()
        const afterLogout = yield* Effect.flip(client.profile.me())
        expect(afterLogout._tag).toBe("TokenBlacklistedError")
      })
    )

    it.effect("a wrong password fails with AuthenticationError, a taken email with UserAlreadyExistsError", () =>
      Effect.gen(function* () {
        const client = yield* clientOf()
        const email = uniqueEmail("client")
        yield* signUp(client, email)
        const wrong = yield* Effect.flip(
          client.auth.login({ payload: { identifier: email, password: Redacted.make("not the password") } })
        )
        expect(wrong).toBeInstanceOf(Client.AuthenticationError)
        const taken = yield* Effect.flip(
          client.auth.register({ payload: { email: Client.Email.make(email), password: secret } })
        )
        expect(taken._tag).toBe("UserAlreadyExistsError")
      })
    )

    it.effect("a refused password and a bad session id come back with their fields", () =>
      Effect.gen(function* () {
        const client = yield* clientOf()
        const weak = yield* Effect.flip(
          client.auth.register({
            payload: { email: Client.Email.make(uniqueEmail("client")), password: Redacted.make("short") }
          })
        )
        expect(weak._tag).toBe("InvalidPasswordError")
        if (weak._tag === "InvalidPasswordError") expect(weak.problems.length).toBeGreaterThan(0)

        let token: string | undefined
        const signedIn = yield* clientOf({ accessToken: () => token })
        token = (yield* signUp(client)).access_token
        const unknown = yield* Effect.flip(
          signedIn.sessions.revoke({
            path: { family_id: Client.FamilyId.make("00000000-0000-4000-8000-000000000000") }
          })
        )
        expect(unknown._tag).toBe("SessionNotFoundError")
      })
    )

    it.effect("a call without a token fails with TokenError", () =>
      Effect.gen(function* () {
        const client = yield* clientOf()
        const failure = yield* Effect.flip(client.profile.me())
        expect(failure._tag).toBe("TokenError")
      })
    )
  })
})

describe("the typed client on a rate-limited route", () => {
  layer(
    withFetch(
      TestApp.layer("memory:", {
        SERVICE_AUTH_RATE_LIMIT_ENABLED: "true",
        SERVICE_AUTH_RATE_LIMITS: JSON.stringify({ login: "2/minute" })
      })
    ),
    { excludeTestServices: true }
  )((it) => {
    it.effect("past the limit, login fails with RateLimitedError carrying the limit and the wait", () =>
      Effect.gen(function* () {
        const client = yield* clientOf()
        const attempt = client.auth.login({ payload: { identifier: uniqueEmail("limited"), password: secret } })
        expect((yield* Effect.flip(attempt))._tag).toBe("AuthenticationError")
        expect((yield* Effect.flip(attempt))._tag).toBe("AuthenticationError")
        const limited = yield* Effect.flip(attempt)
        expect(limited).toBeInstanceOf(Client.RateLimitedError)
        if (limited._tag === "RateLimitedError") {
          expect(limited.limit).toBe(2)
          expect(limited.resetSeconds).toBeGreaterThan(0)
          expect(limited.resetSeconds).toBeLessThanOrEqual(60)
        }
      })
    )
  })
})

describe("the typed client in cookie mode", () => {
  layer(withFetch(TestApp.layer("memory:", { SERVICE_TOKEN_TRANSPORT: "cookie", SERVICE_COOKIE_SECURE: "false" })), {
    excludeTestServices: true
  })((it) => {
    it.effect("keeps the cookies, refreshes from the refresh cookie and echoes the CSRF cookie", () =>
      Effect.gen(function* () {
        const cookies = yield* Client.cookieJar
        let token: string | undefined
        const client = yield* clientOf({ shape: { tokenTransport: "cookie" }, cookies, accessToken: () => token })
        const signedIn = yield* signUp(client)
        expect(signedIn.refresh_token).toBeNull()
        token = signedIn.access_token

        const pair = yield* client.auth.refresh({ payload: null })
        expect(pair.refresh_token).toBeNull()
        expect(pair.access_token).not.toBe(signedIn.access_token)
        token = pair.access_token
        expect((yield* client.profile.me()).email).toBe(signedIn.user.email)
      })
    )

    it.effect("without the CSRF cookie to echo, a refresh from the cookie fails with CsrfError", () =>
      Effect.gen(function* () {
        const cookies = yield* Client.cookieJar
        const client = yield* clientOf({ shape: { tokenTransport: "cookie" }, cookies })
        yield* signUp(client)
        yield* Ref.update(cookies, Cookies.remove("portcullis_csrf"))
        const refused = yield* Effect.flip(client.auth.refresh({ payload: null }))
        expect(refused).toBeInstanceOf(Client.CsrfError)
      })
    )
  })
})

/** Every group served: passkeys, an OAuth provider, and an asymmetric key so that the JWKS is too. */
const everyGroup = {
  ...passkeyEnv,
  SERVICE_EMAIL_SIGN_IN_ENABLED: "true",
  SERVICE_OAUTH_GITHUB_CLIENT_ID: "id",
  SERVICE_OAUTH_GITHUB_CLIENT_SECRET: "secret",
  SERVICE_OAUTH_GITHUB_REDIRECT_URIS: "https://app.example.com/callback",
  SERVICE_JWT_ALGORITHM: "EdDSA",
  SERVICE_JWT_PRIVATE_KEY: generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }).toString()
}

describe("the typed client, every group", () => {
  it("has a group for every feature of the service, and the health group", () => {
    const settings = TestApp.settingsFor({ SERVICE_SECRET_KEY: TestApp.testSecretKey, ...everyGroup })
    const served = features.map((feature) => feature.api({ settings, deployment: {} }).group.identifier)
    expect(Object.keys(Client.PortcullisApi.groups).sort()).toEqual([...served, "health"].sort())
  })

  layer(withFetch(TestApp.layer("memory:", everyGroup)), { excludeTestServices: true })((it) => {
    it.effect("asks for a verification mail, starts a passkey registration and lists OAuth providers", () =>
      Effect.gen(function* () {
        let token: string | undefined
        const client = yield* clientOf({ accessToken: () => token })
        token = (yield* signUp(client)).access_token

        expect((yield* client.verify.requestVerification()).detail).toEqual(expect.any(String))
        const registration = yield* client.passkey.registerBegin()
        expect(registration.challenge_key).toEqual(expect.any(String))
        expect(registration.rp.id).toBe("localhost")
        expect(yield* client.oauth.providers()).toEqual({ providers: ["github"] })
      })
    )

    it.effect(
      "grants a permission and reads it back as a superuser; a user who is not one gets AuthorizationError",
      () =>
        Effect.gen(function* () {
          let token: string | undefined
          const client = yield* clientOf({ accessToken: () => token })
          token = (yield* signUp(client)).access_token
          const refused = yield* Effect.flip(
            client.admin.rolePermissions({ path: { role: Client.RoleName.make("editor") } })
          )
          expect(refused).toBeInstanceOf(Client.AuthorizationError)

          const email = uniqueEmail("root")
          yield* (yield* Accounts).createSuperuser(Client.Email.make(email), secret)
          token = (yield* client.auth.login({ payload: { identifier: email, password: secret } })).access_token
          const role = Client.RoleName.make("editor")
          const permission = Client.PermissionName.make("posts:publish")
          yield* client.admin.assignPermission({ payload: { role, permission } })
          expect(yield* client.admin.rolePermissions({ path: { role } })).toEqual({ role, permissions: [permission] })
        })
    )

    it.effect("asks for a sign-in mail and an address change; refused codes and links come back typed", () =>
      Effect.gen(function* () {
        let token: string | undefined
        const client = yield* clientOf({ accessToken: () => token })
        const email = uniqueEmail("client")
        token = (yield* signUp(client, email)).access_token
        const sent = yield* client.emailSignIn.request({ payload: { email: Client.Email.make(email) } })
        expect(sent.detail).toEqual(expect.any(String))
        const wrongCode = yield* Effect.flip(
          client.emailSignIn.confirm({ payload: { email: Client.Email.make(email), code: "000000" } })
        )
        expect(wrongCode).toBeInstanceOf(Client.SignInCodeError)
        const wrongLink = yield* Effect.flip(client.emailSignIn.confirm({ payload: { token: "not a token" } }))
        expect(wrongLink._tag).toBe("TokenError")

        const moved = Client.Email.make(uniqueEmail("moved"))
        const unproven = yield* Effect.flip(client.emailChange.requestChange({ payload: { new_email: moved } }))
        expect(unproven._tag).toBe("ReauthenticationError")
        const asked = yield* client.emailChange.requestChange({
          payload: { new_email: moved, current_password: secret }
        })
        expect(asked.detail).toEqual(expect.any(String))
        const refused = yield* Effect.flip(client.emailChange.confirmChange({ payload: { token: "not a token" } }))
        expect(refused._tag).toBe("TokenError")
        const notUndone = yield* Effect.flip(client.emailChange.undoChange({ payload: { token: "not a token" } }))
        expect(notUndone._tag).toBe("TokenError")
      })
    )

    it.effect("reads the signing keys and the health probes", () =>
      Effect.gen(function* () {
        const client = yield* clientOf()
        const { keys } = yield* client.jwks.jwks()
        expect(keys).toHaveLength(1)
        expect(keys[0]).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig", kid: expect.any(String) })
        expect(yield* client.health.healthz()).toEqual({ status: "ok" })
        expect(yield* client.health.readyz()).toEqual({ status: "ready" })
      })
    )
  })
})
