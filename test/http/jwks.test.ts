import { generateKeyPairSync } from "node:crypto"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from "jose"
import { startupWarnings } from "../../composition/startup.js"
import { call, expectProblem, me, signUp } from "../support/flows.js"
import { makeOutbox } from "../support/Outbox.js"
import * as TestApp from "../support/TestApp.js"

const pem = (key: import("node:crypto").KeyObject) => key.export({ format: "pem", type: "pkcs8" }).toString()
const current = generateKeyPairSync("ed25519")
const earlier = generateKeyPairSync("ec", { namedCurve: "P-256" })

const env = {
  SERVICE_JWT_ALGORITHM: "EdDSA",
  SERVICE_JWT_PRIVATE_KEY: pem(current.privateKey),
  SERVICE_JWT_VERIFY_KEYS: JSON.stringify([earlier.publicKey.export({ format: "pem", type: "spki" })]),
  SERVICE_JWT_ISSUER: "https://auth.example.com"
}

const outbox = makeOutbox()

/** A fresh user's refresh, verification and reset tokens: the service's own, never an app's. */
const ownTokens = Effect.gen(function* () {
  const session = yield* signUp("own")
  const verification = yield* outbox.token("send_verification_email", session.email)
  yield* call("POST", "/password-reset/request", { json: { email: session.email } })
  const reset = yield* outbox.token("send_password_reset_email", session.email)
  return [session.refresh, verification, reset]
})

/** Whether jose, as an app downstream runs it, accepts the token with the key it holds. */
const appAccepts = (
  token: string,
  key: Parameters<typeof jwtVerify>[1],
  options: { readonly issuer: string; readonly typ?: string }
) =>
  Effect.promise(() =>
    jwtVerify(token, key as Uint8Array, options).then(
      () => true,
      () => false
    )
  )

describe("JWKS with an asymmetric JWT_ALGORITHM", () => {
  layer(TestApp.layer("memory:", env, { deployment: { events: outbox.handlers } }), { excludeTestServices: true })(
    (it) => {
      it.effect("publishes the signing key and the earlier ones, cacheable, with kid, alg and use", () =>
        Effect.gen(function* () {
          const reply = yield* call("GET", "/.well-known/jwks.json")
          expect(reply.status).toBe(200)
          expect(reply.headers.get("content-type")).toContain("application/json")
          expect(reply.headers.get("cache-control")).toBe("public, max-age=300")
          expect(reply.headers.get("x-content-type-options")).toBe("nosniff")
          const { keys } = reply.body as JSONWebKeySet
          expect(keys.map((key) => [key.kty, key.alg, key.use])).toEqual([
            ["OKP", "EdDSA", "sig"],
            ["EC", "ES256", "sig"]
          ])
          for (const key of keys) {
            expect(key.kid).toMatch(/^[A-Za-z0-9_-]{43}$/)
            expect(key).not.toHaveProperty("d")
          }
          // Other API answers stay no-store.
          expect((yield* call("GET", "/me")).headers.get("cache-control")).toBe("no-store")
        })
      )

      it.effect(
        "access tokens carry the signing key's kid and typ at+jwt, verify with jose against the JWKS and serve /me",
        () =>
          Effect.gen(function* () {
            const session = yield* signUp("jwks")
            const jwks = (yield* call("GET", "/.well-known/jwks.json")).body as JSONWebKeySet
            expect(decodeProtectedHeader(session.access)).toEqual({
              alg: "EdDSA",
              typ: "at+jwt",
              kid: jwks.keys[0]?.kid
            })
            const { payload } = yield* Effect.promise(() =>
              jwtVerify(session.access, createLocalJWKSet(jwks), { issuer: "https://auth.example.com", typ: "at+jwt" })
            )
            expect(payload).toMatchObject({ sub: session.userId, type: "access" })
            expect((yield* me(session.access)).status).toBe(200)
          })
      )

      it.effect("refresh, verification and reset tokens are typ JWT and do not verify against the JWKS", () =>
        Effect.gen(function* () {
          const jwks = (yield* call("GET", "/.well-known/jwks.json")).body as JSONWebKeySet
          for (const token of yield* ownTokens) {
            expect(decodeProtectedHeader(token)).toEqual({ alg: "HS256", typ: "JWT" })
            expect(yield* appAccepts(token, createLocalJWKSet(jwks), { issuer: "https://auth.example.com" })).toBe(
              false
            )
          }
        })
      )

      it.effect("is in the OpenAPI document", () =>
        Effect.gen(function* () {
          const app = yield* TestApp.TestApp
          const document = yield* app.request("GET", `${app.settings.server.authPrefix}/openapi.json`)
          const paths = Object.keys((document.body as { paths: Record<string, unknown> }).paths)
          expect(paths).toContain(`${app.settings.server.authPrefix}/.well-known/jwks.json`)
        })
      )
    }
  )
})

describe("JWKS with an HMAC JWT_ALGORITHM", () => {
  layer(TestApp.layer("memory:", {}, { deployment: { events: outbox.handlers } }), { excludeTestServices: true })(
    (it) => {
      it.effect("is not served: 404 problem, so the shared secret is never published", () =>
        Effect.gen(function* () {
          expectProblem(yield* call("GET", "/.well-known/jwks.json"), 404, "NotFoundError")
        })
      )

      it.effect("SECRET_KEY verifies access tokens (typ at+jwt), and no refresh, verification or reset token", () =>
        Effect.gen(function* () {
          const secret = new TextEncoder().encode(TestApp.testSecretKey)
          const session = yield* signUp("hmac")
          expect(decodeProtectedHeader(session.access)).toEqual({ alg: "HS256", typ: "at+jwt" })
          expect(yield* appAccepts(session.access, secret, { issuer: "portcullis", typ: "at+jwt" })).toBe(true)
          for (const token of yield* ownTokens) {
            expect(decodeProtectedHeader(token)).toEqual({ alg: "HS256", typ: "JWT" })
            expect(yield* appAccepts(token, secret, { issuer: "portcullis" })).toBe(false)
          }
        })
      )
    }
  )
})

describe("a deployment whose routeGroups leave out jwks", () => {
  it("is warned at start-up that the public keys are not published, with an asymmetric algorithm only", () => {
    const groups = { routeGroups: ["auth", "profile"] as const }
    const warned = (settings: ReturnType<typeof TestApp.settingsFor>, deployment: object) =>
      startupWarnings(settings, deployment).filter((line) => line.includes("jwks"))
    const asymmetric = TestApp.settingsFor(env)
    expect(warned(asymmetric, groups)).toHaveLength(1)
    expect(warned(asymmetric, { routeGroups: ["auth", "jwks"] })).toEqual([])
    expect(warned(asymmetric, {})).toEqual([])
    expect(warned(TestApp.settingsFor({}), groups)).toEqual([])
  })
})
