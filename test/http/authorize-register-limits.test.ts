import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call, expectProblem, type Session, signUp } from "../support/flows.js"
import { appWithProviders, REDIRECT } from "../support/oauthFlows.js"
import { passkeyEnv, registerComplete, type WithKey } from "../support/passkeys.js"
import { type CreationOptionsLike, SoftwareAuthenticator } from "../support/SoftwareAuthenticator.js"
import * as TestApp from "../support/TestApp.js"

/**
 * The oauth_authorize bucket (per client address: authorize and link/authorize) and the
 * passkey_register bucket (per signed-in user: register/begin and complete), docs/behaviour.md,
 * "Rate limits".
 */

let nextHost = 1
/** A client address no other test of the file uses. */
const freshIp = () => {
  const n = nextHost++
  return `198.18.${n >> 8}.${n & 0xff}`
}
const from = (ip: string) => ({ "x-forwarded-for": ip })

const limitsOn = { SERVICE_AUTH_RATE_LIMIT_ENABLED: "true", SERVICE_TRUSTED_PROXY_HEADERS: "x-forwarded-for" }

const expectRateLimited = (reply: TestApp.Reply, limit: number) => {
  expectProblem(reply, 429, "RateLimitedError")
  const retryAfter = Number(reply.headers.get("retry-after"))
  expect(Number.isInteger(retryAfter)).toBe(true)
  expect(retryAfter).toBeGreaterThanOrEqual(1)
  expect(retryAfter).toBeLessThanOrEqual(60)
  expect(reply.headers.get("ratelimit-limit")).toBe(String(limit))
  expect(reply.headers.get("ratelimit-remaining")).toBe("0")
  expect(reply.headers.get("ratelimit-reset")).toBe(String(retryAfter))
}

const redirect = `redirect_uri=${encodeURIComponent(REDIRECT)}`

/** authorize (sign-in), or link/authorize with a token, from `ip`. */
const authorizeFrom = (
  ip: string,
  options: { readonly provider?: string; readonly token?: string; readonly method?: "GET" | "HEAD" } = {}
) =>
  call(
    options.method ?? "GET",
    `/oauth/${options.provider ?? "google"}${options.token === undefined ? "" : "/link"}/authorize?${redirect}`,
    { headers: from(ip), ...(options.token === undefined ? {} : { token: options.token }) }
  )

const beginFrom = (session: Session, ip = freshIp()) =>
  call("POST", "/passkeys/register/begin", { token: session.access, headers: from(ip) })

for (const backend of TestApp.backends) {
  describe(`oauth_authorize: 30 a minute per client address (${backend.name})`, () => {
    layer(appWithProviders(backend, limitsOn), { excludeTestServices: true })((it) => {
      it.effect(
        "the 31st authorize from one address is 429; link/authorize shares the bucket; another address passes",
        () =>
          Effect.gen(function* () {
            const session = yield* signUp("authorize-limit")
            const ip = freshIp()
            const providers = ["google", "github", "acme", "corp"]
            for (let i = 1; i <= 30; i++) {
              // Sign-in and link flows of every provider, and HEAD (which the router serves as GET), count together.
              const reply =
                i % 3 === 0
                  ? yield* authorizeFrom(ip, { token: session.access, provider: providers[i % 4] ?? "google" })
                  : yield* authorizeFrom(ip, {
                      provider: providers[i % 4] ?? "google",
                      method: i === 1 ? "HEAD" : "GET"
                    })
              expect(reply.status, `#${i} ${reply.text}`).toBe(200)
              expect(reply.headers.get("ratelimit-limit")).toBe("30")
              expect(reply.headers.get("ratelimit-remaining")).toBe(String(30 - i))
            }
            expectRateLimited(yield* authorizeFrom(ip), 30)
            expectRateLimited(yield* authorizeFrom(ip, { token: session.access, provider: "github" }), 30)
            // Per address: another one is served, and the callbacks keep a bucket of their own.
            expect((yield* authorizeFrom(freshIp())).status).toBe(200)
            expect((yield* authorizeFrom(freshIp(), { token: session.access })).status).toBe(200)
            const refusedCallback = yield* call("POST", "/oauth/google/callback", {
              json: { code: "c", state: "s", binding: "b" },
              headers: from(ip)
            })
            expectProblem(refusedCallback, 400, "OAuthError")
            expect(refusedCallback.headers.get("ratelimit-limit")).toBe("10")
          })
      )

      it.effect("link/authorize alone spends the bucket that sign-in authorize counts in", () =>
        Effect.gen(function* () {
          const session = yield* signUp("link-limit")
          const ip = freshIp()
          for (let i = 0; i < 30; i++) {
            expect((yield* authorizeFrom(ip, { token: session.access })).status).toBe(200)
          }
          expectRateLimited(yield* authorizeFrom(ip, { token: session.access }), 30)
          expectRateLimited(yield* authorizeFrom(ip, { provider: "discord" }), 30)
        })
      )
    })
  })

  describe(`passkey_register: 10 a minute per signed-in user (${backend.name})`, () => {
    layer(TestApp.layer(backend, { ...passkeyEnv, ...limitsOn }), { excludeTestServices: true })((it) => {
      it.effect("the 11th begin by one user is 429 from any address, while another user is still served", () =>
        Effect.gen(function* () {
          const user = yield* signUp("register-limit")
          const other = yield* signUp("register-other")
          const ip = freshIp()
          for (let i = 1; i <= 10; i++) {
            // Each from an address of its own: the count is the user's, not the address's.
            const reply = yield* beginFrom(user)
            expect(reply.status, reply.text).toBe(200)
            expect(reply.headers.get("ratelimit-limit")).toBe("10")
            expect(reply.headers.get("ratelimit-remaining")).toBe(String(10 - i))
          }
          expectRateLimited(yield* beginFrom(user, ip), 10)
          expectRateLimited(yield* beginFrom(user), 10)
          // complete counts in the same bucket, and is refused before the body is looked at.
          expectRateLimited(yield* registerComplete(user, { challenge_key: "k", credential: {}, device_name: "x" }), 10)
          // Another user, from the very address just refused, is served.
          const served = yield* beginFrom(other, ip)
          expect(served.status).toBe(200)
          expect(served.headers.get("ratelimit-remaining")).toBe("9")
        })
      )

      it.effect("register/complete counts too: nine begins and a completed registration spend the ten", () =>
        Effect.gen(function* () {
          const user = yield* signUp("register-complete")
          for (let i = 0; i < 8; i++) expect((yield* beginFrom(user)).status).toBe(200)
          const begun = yield* beginFrom(user)
          expect(begun.status).toBe(200)
          const options = begun.body as WithKey<CreationOptionsLike>
          const credential = new SoftwareAuthenticator().register(options)
          const completed = yield* registerComplete(user, {
            challenge_key: options.challenge_key,
            credential,
            device_name: "Laptop"
          })
          expect(completed.status, completed.text).toBe(201)
          expect(completed.headers.get("ratelimit-remaining")).toBe("0")
          expectRateLimited(yield* beginFrom(user), 10)
        })
      )
    })
  })
}

describe("AUTH_RATE_LIMITS sets oauth_authorize and passkey_register like the other buckets", () => {
  const env = {
    ...limitsOn,
    ...passkeyEnv,
    SERVICE_AUTH_RATE_LIMITS: '{"oauth_authorize":"5/minute","passkey_register":"3/minute"}'
  }

  it("reads them, and defaults them to 30 and 10 a minute", () => {
    const set = TestApp.settingsFor({ SERVICE_SECRET_KEY: TestApp.testSecretKey, ...env }).limits.authRateLimits
    expect(set.oauth_authorize).toEqual({ count: 5, windowSeconds: 60 })
    expect(set.passkey_register).toEqual({ count: 3, windowSeconds: 60 })
    expect(set.login).toEqual({ count: 5, windowSeconds: 60 })
    const defaults = TestApp.settingsFor({ SERVICE_SECRET_KEY: TestApp.testSecretKey }).limits.authRateLimits
    expect(defaults.oauth_authorize).toEqual({ count: 30, windowSeconds: 60 })
    expect(defaults.passkey_register).toEqual({ count: 10, windowSeconds: 60 })
  })

  layer(appWithProviders("memory:", env), { excludeTestServices: true })((it) => {
    it.effect("the 6th authorize and the 4th begin are 429", () =>
      Effect.gen(function* () {
        const ip = freshIp()
        for (let i = 0; i < 5; i++) expect((yield* authorizeFrom(ip)).status).toBe(200)
        expectRateLimited(yield* authorizeFrom(ip), 5)
        const user = yield* signUp("register-override")
        for (let i = 0; i < 3; i++) expect((yield* beginFrom(user)).status).toBe(200)
        expectRateLimited(yield* beginFrom(user), 3)
      })
    )
  })
})

describe("passkey_register beside GLOBAL_RATE_LIMIT", () => {
  layer(
    TestApp.layer("memory:", {
      ...passkeyEnv,
      ...limitsOn,
      SERVICE_GLOBAL_RATE_LIMIT: "1000/minute",
      SERVICE_AUTH_RATE_LIMITS: '{"passkey_register":"2/minute"}'
    }),
    { excludeTestServices: true }
  )((it) => {
    it.effect("the headers tell the tighter limit, and a 429 keeps those of the limit that refused it", () =>
      Effect.gen(function* () {
        const user = yield* signUp("register-global")
        const ip = freshIp()
        const first = yield* beginFrom(user, ip)
        expect(first.status).toBe(200)
        expect(first.headers.get("ratelimit-limit")).toBe("2")
        expect(first.headers.get("ratelimit-remaining")).toBe("1")
        expect((yield* beginFrom(user, ip)).status).toBe(200)
        expectRateLimited(yield* beginFrom(user, ip), 2)
      })
    )
  })
})

describe("AUTH_RATE_LIMIT_ENABLED=false", () => {
  layer(appWithProviders("memory:", { ...passkeyEnv, SERVICE_AUTH_RATE_LIMIT_ENABLED: "false" }), {
    excludeTestServices: true
  })((it) => {
    it.effect("neither bucket limits, and no RateLimit header is sent", () =>
      Effect.gen(function* () {
        const user = yield* signUp("register-off")
        for (let i = 0; i < 12; i++) {
          const reply = yield* beginFrom(user)
          expect(reply.status).toBe(200)
          expect(reply.headers.get("ratelimit-limit")).toBeNull()
        }
        for (let i = 0; i < 32; i++) expect((yield* authorizeFrom("127.0.0.1")).status).toBe(200)
      })
    )
  })
})
