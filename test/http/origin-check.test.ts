import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { cookieHeader, setCookies } from "../support/cookies.js"
import { call, expectProblem, login, me, password, register, signIn, signUp, uniqueEmail } from "../support/flows.js"
import { approve, appWithProviders, begin, person } from "../support/oauthFlows.js"
import { passkeyEnv } from "../support/passkeys.js"
import * as TestApp from "../support/TestApp.js"

/**
 * Cookie mode's Origin check (docs/integrating.md, "Cookie mode and CORS": the login CSRF defence): an unsafe request
 * whose Origin is present and is neither PUBLIC_URL's origin nor one of CORS_ORIGINS is refused
 * with 403 CsrfError before anything else runs, on every route.
 */

const PUBLIC = "https://auth.example.com"
const APP = "https://app.example.com"
const EVIL = "https://evil.example"
/** What a browser sends from a sandboxed frame, a data: URL or after some cross-site redirects. */
const OPAQUE = "null"
const foreign = [EVIL, OPAQUE] as const

const cookieEnv = {
  ...passkeyEnv,
  SERVICE_TOKEN_TRANSPORT: "cookie",
  SERVICE_COOKIE_SECURE: "false",
  SERVICE_PUBLIC_URL: PUBLIC,
  SERVICE_CORS_ORIGINS: APP
}

/** A 403 CsrfError that set no cookie and handed out no token. */
const expectRefused = (reply: TestApp.Reply, where: string) => {
  expect(reply.status, where).toBe(403)
  expectProblem(reply, 403, "CsrfError")
  expect(reply.headers.getSetCookie(), where).toEqual([])
  expect(reply.text, where).not.toContain("access_token")
  expect(reply.text, where).not.toContain(EVIL)
}

const userByEmail = (email: string) =>
  Effect.flatMap(UserRepo, (users) => Effect.map(users.findByLogin("email", email), Option.isSome))

const sessionCount = (access: string) =>
  Effect.map(call("GET", "/sessions", { token: access }), (reply) => {
    expect(reply.status).toBe(200)
    return (reply.body as ReadonlyArray<unknown>).length
  })

/** POST /refresh as the page holding the session sends it: both cookies and the CSRF echo. */
const refreshFromCookies = (reply: TestApp.Reply, headers: Record<string, string> = {}) => {
  const cookies = setCookies(reply)
  const refresh = cookies.get("portcullis_refresh")?.value ?? ""
  const csrf = cookies.get("portcullis_csrf")?.value ?? ""
  return call("POST", "/refresh", {
    headers: {
      cookie: cookieHeader({ portcullis_refresh: refresh, portcullis_csrf: csrf }),
      "x-csrf-token": csrf,
      ...headers
    }
  })
}

const callbackFrom = (provider: string, body: Record<string, unknown>, headers: Record<string, string>) =>
  call("POST", `/oauth/${provider}/callback`, { json: body, headers })

for (const backend of TestApp.backends) {
  describe(`cookie mode refuses unsafe requests from a foreign Origin (${backend.name})`, () => {
    layer(appWithProviders(backend, cookieEnv), { excludeTestServices: true })((it) => {
      it.effect("POST /login from a foreign Origin or Origin: null is 403 CsrfError and starts no session", () =>
        Effect.gen(function* () {
          const email = uniqueEmail("origin-login")
          expect((yield* register(email)).status).toBe(202)
          for (const origin of foreign) expectRefused(yield* login(email, password, { origin }), `login ${origin}`)
          // The one session is the one started now, without an Origin.
          const session = yield* signIn(email)
          expect(yield* sessionCount(session.access)).toBe(1)
        })
      )

      it.effect("POST /register from a foreign Origin or Origin: null is 403 CsrfError and makes no user", () =>
        Effect.gen(function* () {
          for (const origin of foreign) {
            const email = uniqueEmail("origin-register")
            const reply = yield* call("POST", "/register", { json: { email, password }, headers: { origin } })
            expectRefused(reply, `register ${origin}`)
            expect(yield* userByEmail(email)).toBe(false)
            expectProblem(yield* login(email), 401, "AuthenticationError")
          }
        })
      )

      it.effect("POST /refresh from a foreign Origin is refused and spends neither the cookie nor the token", () =>
        Effect.gen(function* () {
          const email = uniqueEmail("origin-refresh")
          yield* register(email)
          const signedIn = yield* login(email)
          expect(signedIn.status).toBe(200)
          for (const origin of foreign) {
            expectRefused(yield* refreshFromCookies(signedIn, { origin }), `refresh ${origin}`)
          }
          expect((yield* refreshFromCookies(signedIn)).status).toBe(200)
        })
      )

      it.effect("the OAuth sign-in callback from a foreign Origin is refused: no user, and the state is unspent", () =>
        Effect.gen(function* () {
          for (const origin of foreign) {
            const who = person("origin-oauth")
            const started = yield* begin("google")
            const code = yield* approve(started, who)
            const body = { code, state: started.state, binding: started.binding }
            expectRefused(yield* callbackFrom("google", body, { origin }), `callback ${origin}`)
            expect(yield* userByEmail(who.email ?? "")).toBe(false)
            // Nothing of the flow was spent: the very same callback, without an Origin, signs in.
            const reply = yield* callbackFrom("google", body, {})
            expect(reply.status, reply.text).toBe(200)
            expect(yield* userByEmail(who.email ?? "")).toBe(true)
          }
        })
      )

      it.effect("Bearer routes (POST /logout, PATCH /me, DELETE /me) from a foreign Origin change nothing", () =>
        Effect.gen(function* () {
          const session = yield* signUp("origin-bearer")
          for (const origin of foreign) {
            const headers = { origin }
            expectRefused(yield* call("POST", "/logout", { token: session.access, headers }), `logout ${origin}`)
            expectRefused(
              yield* call("PATCH", "/me", { token: session.access, json: {}, headers }),
              `PATCH /me ${origin}`
            )
            expectRefused(yield* call("DELETE", "/me", { token: session.access, headers }), `DELETE /me ${origin}`)
          }
          // The session was not ended and the account is still there.
          expect((yield* me(session.access)).status).toBe(200)
          expect(yield* userByEmail(session.email)).toBe(true)
        })
      )

      it.effect("every unsafe route the API serves refuses a foreign Origin, known to it or not", () =>
        Effect.gen(function* () {
          const app = yield* TestApp.TestApp
          const document = (yield* call("GET", "/openapi.json")).body as {
            paths: Record<string, Record<string, unknown>>
          }
          const unsafe = Object.entries(document.paths).flatMap(([path, operations]) =>
            Object.keys(operations)
              .filter((method) => ["post", "put", "patch", "delete"].includes(method))
              .map((method) => ({ method: method.toUpperCase(), path: path.replace(/\{\w+\}/g, "x") }))
          )
          // Sign-in, registration, refresh, OAuth and passkey routes among them.
          expect(unsafe.length).toBeGreaterThan(15)
          for (const path of ["/login", "/register", "/refresh", "/oauth/{provider}/callback"]) {
            expect(document.paths[`${app.settings.server.authPrefix}${path}`]?.post, path).toBeDefined()
          }
          for (const { method, path } of [...unsafe, { method: "PUT", path: "/no-such-route" }]) {
            const reply = yield* app.request(method, path, { json: {}, headers: { origin: EVIL } })
            expectRefused(reply, `${method} ${path}`)
          }
        })
      )

      it.effect("PUBLIC_URL's origin, a CORS_ORIGINS origin and no Origin at all are served as before", () =>
        Effect.gen(function* () {
          const email = uniqueEmail("origin-allowed")
          expect(
            (yield* call("POST", "/register", { json: { email, password }, headers: { origin: PUBLIC } })).status
          ).toBe(202)
          const own = yield* login(email, password, { origin: PUBLIC })
          expect(own.status).toBe(200)
          expect(setCookies(own).get("portcullis_refresh")?.value).toEqual(expect.any(String))
          expect((yield* refreshFromCookies(own, { origin: PUBLIC })).status).toBe(200)

          const fromApp = yield* login(email, password, { origin: APP })
          expect(fromApp.status).toBe(200)
          expect(fromApp.headers.get("access-control-allow-origin")).toBe(APP)
          const access = (fromApp.body as { access_token: string }).access_token
          expect((yield* call("PATCH", "/me", { token: access, json: {}, headers: { origin: APP } })).status).toBe(200)

          const who = person("origin-oauth-allowed")
          const started = yield* begin("github")
          const code = yield* approve(started, who)
          const signedIn = yield* callbackFrom(
            "github",
            { code, state: started.state, binding: started.binding },
            { origin: APP }
          )
          expect(signedIn.status, signedIn.text).toBe(200)

          const plain = yield* login(email)
          expect(plain.status).toBe(200)
          expect((yield* refreshFromCookies(plain)).status).toBe(200)
          expect((yield* call("POST", "/logout", { token: access })).status).toBe(204)
        })
      )

      it.effect("safe methods from a foreign Origin are served: they change nothing", () =>
        Effect.gen(function* () {
          const session = yield* signUp("origin-safe")
          expect((yield* call("GET", "/me", { token: session.access, headers: { origin: EVIL } })).status).toBe(200)
          const authorize = yield* call(
            "GET",
            "/oauth/google/authorize?redirect_uri=https%3A%2F%2Fapp.example%2Foauth%2Fcallback",
            {
              headers: { origin: OPAQUE }
            }
          )
          expect(authorize.status, authorize.text).toBe(200)
        })
      )
    })
  })
}

describe("a request refused for its Origin is not counted by the rate limits", () => {
  layer(
    TestApp.layer("memory:", {
      ...cookieEnv,
      SERVICE_AUTH_RATE_LIMIT_ENABLED: "true",
      SERVICE_TRUSTED_PROXY_HEADERS: "x-forwarded-for"
    }),
    { excludeTestServices: true }
  )((it) => {
    it.effect("ten foreign logins from one address are each 403, and the address still has its five", () =>
      Effect.gen(function* () {
        const email = uniqueEmail("origin-counted")
        expect(
          (yield* call("POST", "/register", { json: { email, password }, headers: { "x-forwarded-for": "192.0.2.1" } }))
            .status
        ).toBe(202)
        const from = { "x-forwarded-for": "192.0.2.2" }
        for (let i = 0; i < 10; i++) expectRefused(yield* login(email, password, { ...from, origin: EVIL }), `#${i}`)
        for (let i = 1; i <= 5; i++) {
          const reply = yield* login(email, password, from)
          expect(reply.status).toBe(200)
          expect(reply.headers.get("ratelimit-remaining")).toBe(String(5 - i))
        }
        expectProblem(yield* login(email, password, from), 429, "RateLimitedError")
      })
    )
  })
})

describe("bearer mode ignores Origin", () => {
  layer(appWithProviders("memory:", { SERVICE_PUBLIC_URL: PUBLIC, SERVICE_CORS_ORIGINS: APP }), {
    excludeTestServices: true
  })((it) => {
    it.effect("register, login, refresh, an OAuth callback and logout from a foreign Origin work as before", () =>
      Effect.gen(function* () {
        for (const origin of foreign) {
          const headers = { origin }
          const email = uniqueEmail("bearer-origin")
          expect((yield* call("POST", "/register", { json: { email, password }, headers })).status).toBe(202)
          const signedIn = yield* login(email, password, headers)
          expect(signedIn.status).toBe(200)
          const pair = signedIn.body as { access_token: string; refresh_token: string }
          const rotated = yield* call("POST", "/refresh", { json: { refresh_token: pair.refresh_token }, headers })
          expect(rotated.status).toBe(200)
          const who = person("bearer-origin-oauth")
          const started = yield* begin("google")
          const code = yield* approve(started, who)
          const viaOAuth = yield* callbackFrom(
            "google",
            { code, state: started.state, binding: started.binding },
            headers
          )
          expect(viaOAuth.status, viaOAuth.text).toBe(200)
          const access = (rotated.body as { access_token: string }).access_token
          expect((yield* call("POST", "/logout", { token: access, headers })).status).toBe(204)
        }
      })
    )
  })
})
