import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { Cryptography } from "../../application/ports/Cryptography.js"
import { RefreshTokenRepo } from "../../application/ports/RefreshTokenRepo.js"
import { call, expectProblem, login, password, register, uniqueEmail } from "../support/flows.js"
import * as TestApp from "../support/TestApp.js"

let nextHost = 1
/** A client address no other test of the file uses. */
const freshIp = () => {
  const n = nextHost++
  return `198.51.${100 + (n >> 8)}.${n & 0xff}`
}
const from = (ip: string) => ({ "x-forwarded-for": ip })

/** A registered address; registered from its own client address so no test's budget pays for it. */
const registeredEmail = Effect.gen(function* () {
  const email = uniqueEmail("limited")
  expect((yield* call("POST", "/register", { json: { email, password }, headers: from(freshIp()) })).status).toBe(202)
  return email
})

/** The IP address the session of a refresh token recorded. */
const recordedIp = (refreshToken: string) =>
  Effect.gen(function* () {
    const crypto = yield* Cryptography
    const families = yield* RefreshTokenRepo
    const found = yield* families.findByDigest(crypto.digest(refreshToken))
    return Option.getOrThrow(found).family.ip_address
  })

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

for (const backend of TestApp.backends) {
  describe(`rate limits behind a trusted proxy (${backend.name})`, () => {
    const env = {
      SERVICE_AUTH_RATE_LIMIT_ENABLED: "true",
      SERVICE_TRUSTED_PROXY_HEADERS: "x-forwarded-for",
      SERVICE_AUTH_RATE_LIMITS: '{"register":"2/minute"}'
    }
    layer(TestApp.layer(backend, env), { excludeTestServices: true })((it) => {
      it.effect(
        "the 6th login within a minute from one IP is 429 with Retry-After and RateLimit headers; another IP passes",
        () =>
          Effect.gen(function* () {
            const email = yield* registeredEmail
            const ip = freshIp()
            for (let i = 1; i <= 5; i++) {
              const reply = yield* login(email, password, from(ip))
              expect(reply.status).toBe(200)
              expect(reply.headers.get("ratelimit-limit")).toBe("5")
              expect(reply.headers.get("ratelimit-remaining")).toBe(String(5 - i))
              expect(Number(reply.headers.get("ratelimit-reset"))).toBeGreaterThan(0)
              expect(reply.headers.get("retry-after")).toBeNull()
            }
            const refused = yield* login(email, password, from(ip))
            expectRateLimited(refused, 5)
            expect(refused.headers.get("x-content-type-options")).toBe("nosniff")
            expect(refused.text).not.toContain("access_token")
            expectRateLimited(yield* login(email, password, from(ip)), 5)
            // The limit is per client: another address, even behind the same proxy, still signs in.
            expect((yield* login(email, password, from(freshIp()))).status).toBe(200)
            // The proxy chain is read right-most first: what the client prepends is not its address.
            expectRateLimited(yield* login(email, password, { "x-forwarded-for": `${freshIp()}, ${ip}` }), 5)
          })
      )

      it.effect("IPv6 clients are counted by /64: a new address in the same /64 does not reset the count", () =>
        Effect.gen(function* () {
          const email = yield* registeredEmail
          const prefix = `2001:db8:${(nextHost++).toString(16)}:1`
          for (let i = 1; i <= 5; i++) {
            expect((yield* login(email, password, from(`${prefix}::${i.toString(16)}`))).status).toBe(200)
          }
          expectRateLimited(yield* login(email, password, from(`${prefix}:ffff:ffff:ffff:ffff`)), 5)
          expect((yield* login(email, password, from(`${prefix.slice(0, -1)}2::1`))).status).toBe(200)
        })
      )

      it.effect("the session records the client address the trusted proxy reported", () =>
        Effect.gen(function* () {
          const email = yield* registeredEmail
          const ip = freshIp()
          const reply = yield* login(email, password, { "x-forwarded-for": `203.0.113.250, ${ip}` })
          const pair = reply.body as { refresh_token: string }
          expect(yield* recordedIp(pair.refresh_token)).toBe(ip)
          const v6 = yield* login(email, password, from("2001:DB8:0:0::77"))
          expect(yield* recordedIp((v6.body as { refresh_token: string }).refresh_token)).toBe("2001:db8::77")
        })
      )

      it.effect("invalid requests count until the limit, and the check runs before the body is looked at", () =>
        Effect.gen(function* () {
          const email = yield* registeredEmail
          const ip = freshIp()
          expectProblem(yield* call("POST", "/login", { json: { email }, headers: from(ip) }), 422, "ValidationError")
          expectProblem(
            yield* call("POST", "/login", { json: { email, password, extra: 1 }, headers: from(ip) }),
            422,
            "ValidationError"
          )
          expectProblem(
            yield* call("POST", "/login", {
              raw: "{not json",
              headers: { ...from(ip), "content-type": "application/json" }
            }),
            422,
            "ValidationError"
          )
          expectProblem(
            yield* call("POST", "/login", { raw: "email=a", headers: { ...from(ip), "content-type": "text/plain" } }),
            415,
            "UnsupportedMediaTypeError"
          )
          const fifth = yield* login(uniqueEmail("nobody"), password, from(ip))
          expectProblem(fifth, 401, "AuthenticationError")
          expect(fifth.headers.get("ratelimit-remaining")).toBe("0")
          // The right credentials, and an invalid body, are both refused from now on, unread.
          expectRateLimited(yield* login(email, password, from(ip)), 5)
          expectRateLimited(yield* call("POST", "/login", { json: {}, headers: from(ip) }), 5)
        })
      )

      it.effect("each bucket counts on its own: register by AUTH_RATE_LIMITS, the rest by their defaults", () =>
        Effect.gen(function* () {
          const ip = freshIp()
          expect(
            (yield* call("POST", "/register", { json: { email: uniqueEmail(), password }, headers: from(ip) })).status
          ).toBe(202)
          const second = yield* call("POST", "/register", { json: { email: "bad" }, headers: from(ip) })
          expect(second.status).toBe(422)
          expect(second.headers.get("ratelimit-limit")).toBe("2")
          expectRateLimited(
            yield* call("POST", "/register", { json: { email: uniqueEmail(), password }, headers: from(ip) }),
            2
          )
          // Register's budget is spent; login's is whole.
          const email = yield* registeredEmail
          const signedIn = yield* login(email, password, from(ip))
          expect(signedIn.status).toBe(200)
          expect(signedIn.headers.get("ratelimit-remaining")).toBe("4")
          // Refresh: 30 per minute, valid token or not.
          for (let i = 0; i < 30; i++) {
            expect((yield* call("POST", "/refresh", { json: { refresh_token: "x" }, headers: from(ip) })).status).toBe(
              401
            )
          }
          expectRateLimited(yield* call("POST", "/refresh", { json: { refresh_token: "x" }, headers: from(ip) }), 30)
        })
      )

      it.effect("every spelling the router accepts for a limited route counts in the route's bucket", () =>
        Effect.gen(function* () {
          const app = yield* TestApp.TestApp
          const ip = freshIp()
          const prefix = app.settings.server.authPrefix
          for (const target of [
            `${prefix}/login/`,
            `${prefix.toUpperCase()}/LOGIN`,
            `${prefix}/%6Cogin`,
            `${prefix}/LOGIN/`,
            `${prefix}/login;x=1`
          ]) {
            const reply = yield* app.request("POST", target, { json: {}, headers: from(ip) })
            expectProblem(reply, 422, "ValidationError")
            expect(reply.headers.get("ratelimit-limit"), target).toBe("5")
          }
          expectRateLimited(yield* login(uniqueEmail(), password, from(ip)), 5)
          // A doubled slash is a spelling the router does not accept: no route, so no way around the bucket.
          expectProblem(
            yield* app.request("POST", `${prefix}//login`, { json: {}, headers: from(freshIp()) }),
            404,
            "NotFoundError"
          )
        })
      )

      it.effect("routes this build does not serve yet are limited by method and path, ready for when they arrive", () =>
        Effect.gen(function* () {
          const buckets = [
            { paths: ["/password-reset/request", "/password-reset/confirm"], limit: 3 },
            { paths: ["/verify-email/request", "/verify-email/confirm"], limit: 3 },
            { paths: ["/passkeys/authenticate/begin", "/passkeys/authenticate/complete"], limit: 10 },
            { paths: ["/oauth/github/callback", "/oauth/google/callback"], limit: 10 }
          ]
          for (const bucket of buckets) {
            const ip = freshIp()
            for (let i = 0; i < bucket.limit; i++) {
              const reply = yield* call("POST", bucket.paths[i % 2] ?? "", { json: {}, headers: from(ip) })
              expect(reply.status).not.toBe(429)
              expect(reply.headers.get("ratelimit-limit")).toBe(String(bucket.limit))
            }
            for (const path of bucket.paths) {
              expectRateLimited(yield* call("POST", path, { json: {}, headers: from(ip) }), bucket.limit)
            }
          }
        })
      )

      it.effect("routes outside the buckets carry no RateLimit headers and are never limited", () =>
        Effect.gen(function* () {
          const ip = freshIp()
          for (let i = 0; i < 12; i++) {
            const reply = yield* call("GET", "/me", { headers: from(ip) })
            expect(reply.status).toBe(401)
            expect(reply.headers.get("ratelimit-limit")).toBeNull()
          }
          // A wrong method on a limited path is not the limited route.
          for (let i = 0; i < 6; i++) expect((yield* call("GET", "/login", { headers: from(ip) })).status).toBe(405)
        })
      )
    })
  })

  describe(`rate limits with no trusted proxy header (${backend.name})`, () => {
    layer(TestApp.layer(backend, { SERVICE_AUTH_RATE_LIMIT_ENABLED: "true" }), {
      excludeTestServices: true
    })((it) => {
      it.effect("X-Forwarded-For is ignored: the socket's address is the client, for limits and for sessions", () =>
        Effect.gen(function* () {
          const email = uniqueEmail()
          expect((yield* register(email)).status).toBe(202)
          const first = yield* login(email, password, from("203.0.113.10"))
          expect(first.status).toBe(200)
          expect(yield* recordedIp((first.body as { refresh_token: string }).refresh_token)).toBe("127.0.0.1")
          for (let i = 0; i < 4; i++) {
            expect((yield* login(email, password, from(`203.0.113.${20 + i}`))).status).toBe(200)
          }
          expectRateLimited(yield* login(email, password, from("203.0.113.99")), 5)
        })
      )
    })
  })

  describe(`GLOBAL_RATE_LIMIT (${backend.name})`, () => {
    const env = {
      SERVICE_AUTH_RATE_LIMIT_ENABLED: "true",
      SERVICE_GLOBAL_RATE_LIMIT: "4/minute",
      SERVICE_TRUSTED_PROXY_HEADERS: "x-forwarded-for"
    }
    layer(TestApp.layer(backend, env), { excludeTestServices: true })((it) => {
      it.effect("applies per client to any route, known or not", () =>
        Effect.gen(function* () {
          const ip = freshIp()
          const replies = [
            yield* call("GET", "/me", { headers: from(ip) }),
            yield* call("GET", "/no-such-route", { headers: from(ip) }),
            yield* call("GET", "/openapi.json", { headers: from(ip) }),
            yield* call("DELETE", "/login", { headers: from(ip) })
          ]
          expect(replies.map((reply) => reply.status)).toEqual([401, 404, 200, 405])
          expect(replies.map((reply) => reply.headers.get("ratelimit-remaining"))).toEqual(["3", "2", "1", "0"])
          expectRateLimited(yield* call("GET", "/me", { headers: from(ip) }), 4)
          expectRateLimited(yield* call("GET", "/no-such-route", { headers: from(ip) }), 4)
          expect((yield* call("GET", "/me", { headers: from(freshIp()) })).status).toBe(401)
        })
      )

      it.effect("the health check is not limited", () =>
        Effect.gen(function* () {
          const app = yield* TestApp.TestApp
          const ip = freshIp()
          for (let i = 0; i < 6; i++) {
            const reply = yield* app.request("GET", "/healthz", { headers: from(ip) })
            expect(reply.status).toBe(200)
            expect(reply.headers.get("ratelimit-limit")).toBeNull()
          }
        })
      )

      it.effect("on a limited route, the headers describe the tighter of the route's and the global limit", () =>
        Effect.gen(function* () {
          const ip = freshIp()
          const first = yield* login(uniqueEmail("nobody"), password, from(ip))
          expect(first.status).toBe(401)
          // login allows 5 (4 left), global 4 (3 left): the global one binds.
          expect(first.headers.get("ratelimit-limit")).toBe("4")
          expect(first.headers.get("ratelimit-remaining")).toBe("3")
        })
      )
    })
  })

  describe(`rate limits switched off (${backend.name})`, () => {
    layer(TestApp.layer(backend, { SERVICE_AUTH_RATE_LIMIT_ENABLED: "false" }), {
      excludeTestServices: true
    })((it) => {
      it.effect("AUTH_RATE_LIMIT_ENABLED=false: no limit and no RateLimit headers", () =>
        Effect.gen(function* () {
          const email = uniqueEmail()
          expect((yield* register(email)).status).toBe(202)
          for (let i = 0; i < 8; i++) {
            const reply = yield* login(email)
            expect(reply.status).toBe(200)
            expect(reply.headers.get("ratelimit-limit")).toBeNull()
          }
          for (let i = 0; i < 5; i++) expect((yield* register(uniqueEmail())).status).toBe(202)
        })
      )
    })
  })
}
