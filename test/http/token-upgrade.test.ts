import { generateKeyPairSync, type KeyObject } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { CompactSign, calculateJwkThumbprint, decodeProtectedHeader, type JWK } from "jose"
import { TokenSigner } from "../../application/ports/TokenSigner.js"
import { call, expectProblem, me, type Session, signUp } from "../support/flows.js"
import { makeOutbox } from "../support/Outbox.js"
import * as TestApp from "../support/TestApp.js"

/**
 * Tokens issued before the keys were separated stay good until they expire, each for its own
 * purpose only. A server of before (every token signed with the published key, `typ: JWT`, as
 * the signer of 0.1 did) issues them; the upgraded server, on the same database, is given them.
 */

const encoder = new TextEncoder()
const pem = (key: KeyObject) => key.export({ format: "pem", type: "pkcs8" }).toString()
const ed25519 = generateKeyPairSync("ed25519")

const algorithms = [
  {
    name: "HS256",
    env: {},
    header: Effect.succeed({ alg: "HS256", typ: "JWT" }),
    key: encoder.encode(TestApp.testSecretKey) as KeyObject | Uint8Array
  },
  {
    name: "EdDSA",
    env: { SERVICE_JWT_ALGORITHM: "EdDSA", SERVICE_JWT_PRIVATE_KEY: pem(ed25519.privateKey) },
    header: Effect.map(
      Effect.promise(() => calculateJwkThumbprint(ed25519.publicKey.export({ format: "jwk" }) as JWK, "sha256")),
      (kid) => ({ alg: "EdDSA", typ: "JWT", kid })
    ),
    key: ed25519.privateKey as KeyObject | Uint8Array
  }
]

for (const algorithm of algorithms) {
  /** The signer of before: every purpose under the published key, one header. */
  const signerOfBefore = Layer.effect(
    TokenSigner,
    Effect.map(algorithm.header, (header) =>
      TokenSigner.of({
        sign: (claims) =>
          Effect.promise(() =>
            new CompactSign(encoder.encode(JSON.stringify({ ...claims, iss: "portcullis" })))
              .setProtectedHeader(header)
              .sign(algorithm.key)
          ),
        verify: () => Effect.dieMessage("the server of before is only asked to sign")
      })
    )
  )

  describe(`tokens issued before the upgrade (JWT_ALGORITHM=${algorithm.name})`, () => {
    it.live(
      "are still accepted by the upgraded server, each for its own purpose and for no other",
      () =>
        Effect.gen(function* () {
          const backend = TestApp.sqliteFileBackend()
          const outbox = makeOutbox()
          const deployment = { events: outbox.handlers }

          const before = yield* Effect.gen(function* () {
            const sessions: ReadonlyArray<Session> = [yield* signUp("before"), yield* signUp("before")]
            const [first, second] = sessions as [Session, Session]
            const verifyToken = yield* outbox.token("send_verification_email", first.email)
            yield* call("POST", "/password-reset/request", { json: { email: second.email } })
            const resetToken = yield* outbox.token("send_password_reset_email", second.email)
            return { first, second, verifyToken, resetToken }
          }).pipe(Effect.provide(TestApp.layer(backend, algorithm.env, { deployment, overrides: signerOfBefore })))
          const { first, second, verifyToken, resetToken } = before
          for (const token of [first.access, first.refresh, verifyToken, resetToken]) {
            expect(decodeProtectedHeader(token).typ).toBe("JWT")
          }

          yield* Effect.gen(function* () {
            // Access: still serves /me. Refresh: not a bearer token; still renews its session.
            expect((yield* me(first.access)).status).toBe(200)
            expectProblem(yield* me(first.refresh), 401, "TokenError")
            expectProblem(yield* call("POST", "/refresh", { json: { refresh_token: first.access } }), 401, "TokenError")
            const renewed = yield* call("POST", "/refresh", { json: { refresh_token: first.refresh } })
            expect(renewed.status).toBe(200)
            const pair = renewed.body as { access_token: string; refresh_token: string }
            expect(decodeProtectedHeader(pair.access_token)).toMatchObject({ alg: algorithm.name, typ: "at+jwt" })
            expect(decodeProtectedHeader(pair.refresh_token)).toEqual({ alg: "HS256", typ: "JWT" })
            expect((yield* me(pair.access_token)).status).toBe(200)

            // Mailed tokens: each for its own purpose only.
            expectProblem(
              yield* call("POST", "/password-reset/confirm", {
                json: { token: verifyToken, new_password: "a new passphrase of some length" }
              }),
              401,
              "TokenError"
            )
            expectProblem(
              yield* call("POST", "/verify-email/confirm", { json: { token: resetToken } }),
              401,
              "TokenError"
            )
            expect((yield* call("POST", "/verify-email/confirm", { json: { token: verifyToken } })).status).toBe(200)
            const reset = yield* call("POST", "/password-reset/confirm", {
              json: { token: resetToken, new_password: "a new passphrase of some length" }
            })
            expect(reset.status).toBe(200)
            expectProblem(yield* me(second.access), 401, "TokenBlacklistedError")
          }).pipe(Effect.provide(TestApp.layer(backend, algorithm.env, { deployment })))
        }),
      60_000
    )
  })
}
