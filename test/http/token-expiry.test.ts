import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { CompactSign } from "jose"
import { expectProblem, me, refresh, signUp } from "../support/flows.js"
import * as TestApp from "../support/TestApp.js"

/** A token signed with the service's own key, claims chosen by the test. */
const signed = (claims: Record<string, unknown>, secret = TestApp.testSecretKey) =>
  Effect.promise(() =>
    new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .sign(new TextEncoder().encode(secret))
  )

const now = () => Math.floor(Date.now() / 1000)

for (const backend of TestApp.backends) {
  describe(`token expiry and forgery through HTTP (${backend.name})`, () => {
    layer(TestApp.layer(backend), { excludeTestServices: true })((it) => {
      it.effect("an access token past its expiry and the leeway is 401 TokenExpiredError", () =>
        Effect.gen(function* () {
          const session = yield* signUp()
          const { family_id } = JSON.parse(Buffer.from(session.access.split(".")[1] ?? "", "base64url").toString())
          const claims = { sub: session.userId, type: "access", jti: "j1", iss: "portcullis", family_id }
          const expired = yield* signed({ ...claims, iat: now() - 3600, exp: now() - 31 })
          const reply = yield* me(expired)
          expectProblem(reply, 401, "TokenExpiredError")
          expect(reply.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"')
          // Within the 30 s leeway the same kind of token is still accepted.
          expect((yield* me(yield* signed({ ...claims, iat: now() - 3600, exp: now() - 5 }))).status).toBe(200)
        })
      )

      it.effect("an expired refresh token is 401 TokenExpiredError", () =>
        Effect.gen(function* () {
          const session = yield* signUp()
          const expired = yield* signed({
            sub: session.userId,
            type: "refresh",
            jti: "r1",
            iss: "portcullis",
            family_id: "f1",
            iat: now() - 3600,
            exp: now() - 60
          })
          expectProblem(yield* refresh(expired), 401, "TokenExpiredError")
        })
      )

      it.effect("tokens from another key, another issuer or with alg none are refused", () =>
        Effect.gen(function* () {
          const session = yield* signUp()
          const claims = { sub: session.userId, type: "access", jti: "j2", iat: now(), exp: now() + 600 }
          expectProblem(
            yield* me(yield* signed({ ...claims, iss: "portcullis" }, "another-secret-key-of-at-least-32-bytes")),
            401,
            "TokenError"
          )
          expectProblem(yield* me(yield* signed({ ...claims, iss: "someone-else" })), 401, "TokenError")
          const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url")
          const unsigned = `${encode({ alg: "none", typ: "JWT" })}.${encode({ ...claims, iss: "portcullis" })}.`
          expectProblem(yield* me(unsigned), 401, "TokenError")
        })
      )
    })
  })
}
