import { describe, expect, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as CsrfTokensHmac from "../../infrastructure/crypto/CsrfTokensHmac.js"
import { cookieHeader, setCookies } from "../support/cookies.js"
import { call, expectProblem, login, me, register, uniqueEmail } from "../support/flows.js"
import * as TestApp from "../support/TestApp.js"

const REFRESH = "portcullis_refresh"
const CSRF = "portcullis_csrf"
const THIRTY_DAYS = String(30 * 24 * 60 * 60)

/** What a browser holds after a sign-in in cookie mode. */
interface CookieSession {
  readonly email: string
  readonly access: string
  readonly refresh: string
  readonly csrf: string
}

/** The two cookies of a response that must set them both, with their values. */
const sessionCookies = (reply: TestApp.Reply) => {
  const cookies = setCookies(reply)
  const refresh = cookies.get(REFRESH)
  const csrf = cookies.get(CSRF)
  expect(refresh?.value).toEqual(expect.any(String))
  expect(csrf?.value).toEqual(expect.any(String))
  return { refresh: refresh?.value ?? "", csrf: csrf?.value ?? "", cookies }
}

const signUpWithCookies = Effect.gen(function* () {
  const email = uniqueEmail("cookie")
  expect((yield* register(email)).status).toBe(202)
  const reply = yield* login(email)
  expect(reply.status).toBe(200)
  const { refresh, csrf } = sessionCookies(reply)
  return { email, access: (reply.body as { access_token: string }).access_token, refresh, csrf } as CookieSession
})

/** POST /refresh as a browser page would: cookies, the CSRF echo, and an optional body. */
const refreshWith = (options: {
  readonly refresh?: string
  readonly csrfCookie?: string
  readonly header?: string
  readonly json?: unknown
}) => {
  const cookies: Record<string, string> = {}
  if (options.refresh !== undefined) cookies[REFRESH] = options.refresh
  if (options.csrfCookie !== undefined) cookies[CSRF] = options.csrfCookie
  const headers: Record<string, string> = {}
  if (Object.keys(cookies).length > 0) headers.cookie = cookieHeader(cookies)
  if (options.header !== undefined) headers["x-csrf-token"] = options.header
  return call("POST", "/refresh", { headers, ...(options.json === undefined ? {} : { json: options.json }) })
}

/** The request a page makes with what the browser holds for a session. */
const refreshAs = (session: Pick<CookieSession, "refresh" | "csrf">, json?: unknown) =>
  refreshWith({ refresh: session.refresh, csrfCookie: session.csrf, header: session.csrf, json })

for (const backend of TestApp.backends) {
  describe(`cookie mode over plain http (${backend.name})`, () => {
    layer(TestApp.layer(backend, { SERVICE_TOKEN_TRANSPORT: "cookie", SERVICE_COOKIE_SECURE: "false" }), {
      excludeTestServices: true
    })((it) => {
      it.effect(
        "login sets the HttpOnly refresh cookie and the readable CSRF cookie, and answers refresh_token null",
        () =>
          Effect.gen(function* () {
            const email = uniqueEmail()
            yield* register(email)
            const reply = yield* login(email)
            expect(reply.status).toBe(200)
            expect(reply.body).toMatchObject({ access_token: expect.any(String), refresh_token: null, expires_in: 900 })
            expect((reply.body as { user: { email: string } }).user.email).toBe(email)

            const { cookies, refresh, csrf } = sessionCookies(reply)
            const refreshCookie = cookies.get(REFRESH)?.attributes
            expect(refresh.split(".")).toHaveLength(3)
            expect(refreshCookie?.get("httponly")).toBe(true)
            expect(refreshCookie?.get("path")).toBe("/api/v1/auth")
            expect(refreshCookie?.get("samesite")).toBe("Lax")
            expect(refreshCookie?.get("max-age")).toBe(THIRTY_DAYS)
            expect(refreshCookie?.has("secure")).toBe(false)
            expect(refreshCookie?.has("domain")).toBe(false)

            const csrfCookie = cookies.get(CSRF)?.attributes
            expect(csrfCookie?.has("httponly")).toBe(false)
            expect(csrfCookie?.get("path")).toBe("/")
            expect(csrfCookie?.get("samesite")).toBe("Lax")
            expect(csrfCookie?.get("max-age")).toBe(THIRTY_DAYS)
            expect(csrfCookie?.has("secure")).toBe(false)
            expect(reply.headers.get("x-csrf-token")).toBe(csrf)
            expect(reply.headers.get("cache-control")).toBe("no-store")
            // The access token works as in bearer mode.
            expect((yield* me((reply.body as { access_token: string }).access_token)).status).toBe(200)
          })
      )

      it.effect("a failed login sets no cookie", () =>
        Effect.gen(function* () {
          const reply = yield* login(uniqueEmail("nobody"))
          expectProblem(reply, 401, "AuthenticationError")
          expect(reply.headers.getSetCookie()).toEqual([])
        })
      )

      it.effect("refresh with the cookie but no CSRF header, or a wrong one, is 403 CsrfError and spends nothing", () =>
        Effect.gen(function* () {
          const session = yield* signUpWithCookies
          const missing = yield* refreshWith({ refresh: session.refresh, csrfCookie: session.csrf })
          expectProblem(missing, 403, "CsrfError")
          expect(missing.headers.getSetCookie()).toEqual([])
          const wrong = yield* refreshWith({ refresh: session.refresh, csrfCookie: session.csrf, header: "wrong" })
          expectProblem(wrong, 403, "CsrfError")
          // The header alone, without the cookie it must echo, is not enough either.
          expectProblem(yield* refreshWith({ refresh: session.refresh, header: session.csrf }), 403, "CsrfError")
          // None of these spent the refresh token.
          expect((yield* refreshAs(session)).status).toBe(200)
        })
      )

      it.effect("refresh with the header echoing the cookie rotates both cookies and answers refresh_token null", () =>
        Effect.gen(function* () {
          const session = yield* signUpWithCookies
          const reply = yield* refreshAs(session)
          expect(reply.status).toBe(200)
          expect(reply.body).toEqual({
            access_token: expect.any(String),
            refresh_token: null,
            token_type: "bearer",
            expires_in: 900
          })
          const next = sessionCookies(reply)
          expect(next.refresh).not.toBe(session.refresh)
          expect(next.csrf).not.toBe(session.csrf)
          expect(next.cookies.get(REFRESH)?.attributes.get("httponly")).toBe(true)
          expect(next.cookies.get(REFRESH)?.attributes.get("path")).toBe("/api/v1/auth")
          expect((yield* me((reply.body as { access_token: string }).access_token)).status).toBe(200)
          // The new pair of cookies works in turn.
          expect((yield* refreshAs(next)).status).toBe(200)
        })
      )

      it.effect("the rotated cookie presented again is reuse: 401, the family ends, the cookies are cleared", () =>
        Effect.gen(function* () {
          const session = yield* signUpWithCookies
          const rotated = yield* refreshAs(session)
          const next = sessionCookies(rotated)
          const reuse = yield* refreshAs(session)
          expectProblem(reuse, 401, "TokenBlacklistedError")
          const cleared = setCookies(reuse)
          expect(cleared.get(REFRESH)?.attributes.get("max-age")).toBe("0")
          expect(cleared.get(CSRF)?.attributes.get("max-age")).toBe("0")
          expectProblem(yield* refreshAs(next), 401, "TokenBlacklistedError")
          expectProblem(
            yield* me((rotated.body as { access_token: string }).access_token),
            401,
            "TokenBlacklistedError"
          )
        })
      )

      it.effect(
        "a CSRF value that is not HMAC-valid for the session is refused even when cookie and header match",
        () =>
          Effect.gen(function* () {
            const session = yield* signUpWithCookies
            const other = yield* signUpWithCookies
            const [nonce = ""] = session.csrf.split(".")
            const forgeries = [
              "attacker-chosen-value",
              `${nonce}.${"A".repeat(43)}`,
              `${nonce}.${session.csrf.split(".")[1]?.slice(0, -1)}B`,
              // Validly signed, but for another session.
              other.csrf,
              // Bound to this very session, but signed under another SECRET_KEY.
              yield* CsrfTokensHmac.make(Redacted.make("another-secret-key-with-at-least-32-bytes")).issue(
                session.refresh
              )
            ]
            for (const forged of forgeries) {
              expectProblem(
                yield* refreshWith({ refresh: session.refresh, csrfCookie: forged, header: forged }),
                403,
                "CsrfError"
              )
            }
            expect((yield* refreshAs(session)).status).toBe(200)
          })
      )

      it.effect("the body may be empty or absent; the cookie wins over a body token", () =>
        Effect.gen(function* () {
          const session = yield* signUpWithCookies
          const empty = yield* refreshAs(session, {})
          expect(empty.status).toBe(200)
          const afterEmpty = sessionCookies(empty)
          const withBody = yield* refreshAs(afterEmpty, { refresh_token: "not-a-token" })
          expect(withBody.status).toBe(200)
          const afterBody = sessionCookies(withBody)
          expectProblem(yield* refreshAs(afterBody, { refresh_token: 42 }), 422, "ValidationError")
          expectProblem(yield* refreshAs(afterBody, { other: "field" }), 422, "ValidationError")
          expect((yield* refreshAs(afterBody)).status).toBe(200)
        })
      )

      it.effect("without the cookie, a body token is used without a CSRF check and comes back in the cookies", () =>
        Effect.gen(function* () {
          const session = yield* signUpWithCookies
          const reply = yield* refreshWith({ json: { refresh_token: session.refresh } })
          expect(reply.status).toBe(200)
          expect((reply.body as { refresh_token: unknown }).refresh_token).toBeNull()
          const next = sessionCookies(reply)
          expect((yield* refreshAs(next)).status).toBe(200)
          expectProblem(yield* refreshWith({}), 401, "TokenError")
          expectProblem(yield* refreshWith({ json: {} }), 401, "TokenError")
        })
      )

      it.effect("logout clears both cookies with Max-Age=0 on their own paths", () =>
        Effect.gen(function* () {
          const session = yield* signUpWithCookies
          const reply = yield* call("POST", "/logout", { token: session.access })
          expect(reply.status).toBe(204)
          const cleared = setCookies(reply)
          expect(cleared.get(REFRESH)).toMatchObject({ value: "" })
          expect(cleared.get(REFRESH)?.attributes.get("max-age")).toBe("0")
          expect(cleared.get(REFRESH)?.attributes.get("path")).toBe("/api/v1/auth")
          expect(cleared.get(REFRESH)?.attributes.get("httponly")).toBe(true)
          expect(cleared.get(CSRF)).toMatchObject({ value: "" })
          expect(cleared.get(CSRF)?.attributes.get("max-age")).toBe("0")
          expect(cleared.get(CSRF)?.attributes.get("path")).toBe("/")
          expectProblem(yield* refreshAs(session), 401, "TokenBlacklistedError")
          expectProblem(yield* me(session.access), 401, "TokenBlacklistedError")
        })
      )
    })
  })

  describe(`cookie mode with Secure, SameSite=Strict, a domain and another prefix (${backend.name})`, () => {
    layer(
      TestApp.layer(backend, {
        SERVICE_TOKEN_TRANSPORT: "cookie",
        SERVICE_COOKIE_SECURE: "true",
        SERVICE_COOKIE_SAMESITE: "strict",
        SERVICE_COOKIE_DOMAIN: "example.test",
        SERVICE_API_PREFIX: "/v2"
      }),
      { excludeTestServices: true }
    )((it) => {
      it.effect(
        "both cookies carry Secure, SameSite=Strict and the domain; the refresh cookie's path is the prefix",
        () =>
          Effect.gen(function* () {
            const session = yield* signUpWithCookies
            const reply = yield* refreshAs(session)
            expect(reply.status).toBe(200)
            const { cookies } = sessionCookies(reply)
            for (const name of [REFRESH, CSRF]) {
              const attributes = cookies.get(name)?.attributes
              expect(attributes?.get("secure")).toBe(true)
              expect(attributes?.get("samesite")).toBe("Strict")
              expect(attributes?.get("domain")).toBe("example.test")
            }
            expect(cookies.get(REFRESH)?.attributes.get("path")).toBe("/v2/auth")
            expect(cookies.get(CSRF)?.attributes.get("path")).toBe("/")
            const logout = yield* call("POST", "/logout", {
              token: (reply.body as { access_token: string }).access_token
            })
            const cleared = setCookies(logout)
            expect(cleared.get(REFRESH)?.attributes.get("domain")).toBe("example.test")
            expect(cleared.get(REFRESH)?.attributes.get("path")).toBe("/v2/auth")
            expect(cleared.get(CSRF)?.attributes.get("max-age")).toBe("0")
          })
      )
    })
  })

  describe(`bearer mode ignores cookies (${backend.name})`, () => {
    layer(TestApp.layer(backend), { excludeTestServices: true })((it) => {
      it.effect("login, refresh and logout set no cookie; the body token is used and a cookie is ignored", () =>
        Effect.gen(function* () {
          const email = uniqueEmail()
          yield* register(email)
          const reply = yield* login(email)
          expect(reply.headers.getSetCookie()).toEqual([])
          expect(reply.headers.get("x-csrf-token")).toBeNull()
          const refresh = (reply.body as { refresh_token: string }).refresh_token
          expect(refresh).toEqual(expect.any(String))
          // A refresh cookie alone is not a refresh request in bearer mode.
          expectProblem(yield* refreshWith({ refresh }), 422, "ValidationError")
          const rotated = yield* refreshWith({ refresh: "ignored", json: { refresh_token: refresh } })
          expect(rotated.status).toBe(200)
          expect(rotated.headers.getSetCookie()).toEqual([])
          expect((rotated.body as { refresh_token: unknown }).refresh_token).toEqual(expect.any(String))
          const logout = yield* call("POST", "/logout", {
            token: (rotated.body as { access_token: string }).access_token
          })
          expect(logout.status).toBe(204)
          expect(logout.headers.getSetCookie()).toEqual([])
        })
      )
    })
  })
}
