import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call, expectProblem, login, me, password, refresh, register, signIn, uniqueEmail } from "../support/flows.js"
import { makeOutbox } from "../support/Outbox.js"
import * as TestApp from "../support/TestApp.js"

const newPassword = "a completely new passphrase"

for (const backend of TestApp.backends) {
  describe(`email verification and password reset (${backend.name})`, () => {
    const outbox = makeOutbox()
    layer(TestApp.layer(backend, {}, { deployment: { events: outbox.handlers } }), { excludeTestServices: true })(
      (it) => {
        it.effect("registration sends a verification token that verifies the address once and only once", () =>
          Effect.gen(function* () {
            const email = uniqueEmail()
            expect((yield* register(email)).status).toBe(202)
            const token = yield* outbox.token("send_verification_email", email)
            const session = yield* signIn(email)
            expectProblem(yield* call("GET", "/me/verified", { token: session.access }), 403, "AuthorizationError")
            const confirmed = yield* call("POST", "/verify-email/confirm", { json: { token } })
            expect(confirmed.status).toBe(200)
            expect(confirmed.body).toEqual({ detail: expect.any(String) })
            expect((yield* me(session.access)).body).toMatchObject({ is_verified: true })
            expect((yield* call("GET", "/me/verified", { token: session.access })).status).toBe(200)
            expectProblem(
              yield* call("POST", "/verify-email/confirm", { json: { token } }),
              401,
              "TokenBlacklistedError"
            )
            const verified = yield* outbox.next("after_email_verify", email)
            expect(verified[0]).toMatchObject({ email, is_verified: true })
          })
        )

        it.effect("a duplicate registration sends no mail and emits no after_register", () =>
          Effect.gen(function* () {
            const email = uniqueEmail()
            yield* register(email)
            yield* outbox.token("send_verification_email", email)
            yield* register(email, "another password entirely")
            expect(yield* outbox.count("send_verification_email", email)).toBe(1)
            expect(yield* outbox.count("after_register", email)).toBe(1)
          })
        )

        it.effect(
          "verify-email/request sends a new token (202); for a verified user it answers 202 and sends nothing",
          () =>
            Effect.gen(function* () {
              const email = uniqueEmail()
              yield* register(email)
              const session = yield* signIn(email)
              const requested = yield* call("POST", "/verify-email/request", { token: session.access })
              expect(requested.status).toBe(202)
              const second = yield* outbox.token("send_verification_email", email, 2)
              expect((yield* call("POST", "/verify-email/confirm", { json: { token: second } })).status).toBe(200)
              const again = yield* call("POST", "/verify-email/request", { token: session.access })
              expect(again.status).toBe(202)
              expect(again.body).toEqual(requested.body)
              expect(yield* outbox.count("send_verification_email", email)).toBe(2)
              expectProblem(yield* call("POST", "/verify-email/request"), 401, "TokenError")
            })
        )

        it.effect("verify-email/confirm refuses garbage, another purpose's token and a missing token", () =>
          Effect.gen(function* () {
            const email = uniqueEmail()
            yield* register(email)
            const session = yield* signIn(email)
            expectProblem(
              yield* call("POST", "/verify-email/confirm", { json: { token: "garbage" } }),
              401,
              "TokenError"
            )
            expectProblem(
              yield* call("POST", "/verify-email/confirm", { json: { token: session.access } }),
              401,
              "TokenError"
            )
            yield* call("POST", "/password-reset/request", { json: { email } })
            const reset = yield* outbox.token("send_password_reset_email", email)
            expectProblem(yield* call("POST", "/verify-email/confirm", { json: { token: reset } }), 401, "TokenError")
            expectProblem(yield* call("POST", "/verify-email/confirm", { json: {} }), 422, "ValidationError")
          })
        )

        it.effect(
          "password-reset/request answers the same 202 for unknown and known addresses, mailing only the known",
          () =>
            Effect.gen(function* () {
              const email = uniqueEmail()
              yield* register(email)
              const unknownEmail = uniqueEmail("nobody")
              const unknown = yield* call("POST", "/password-reset/request", { json: { email: unknownEmail } })
              const known = yield* call("POST", "/password-reset/request", { json: { email } })
              expect(unknown.status).toBe(202)
              expect(known.status).toBe(202)
              expect(known.body).toEqual(unknown.body)
              yield* outbox.token("send_password_reset_email", email)
              expect(yield* outbox.count("send_password_reset_email", unknownEmail)).toBe(0)
              expectProblem(
                yield* call("POST", "/password-reset/request", { json: { email: "nope" } }),
                422,
                "ValidationError"
              )
            })
        )

        it.effect(
          "password-reset/confirm sets the password, ends every session, works once, and verifies the address",
          () =>
            Effect.gen(function* () {
              const email = uniqueEmail()
              yield* register(email)
              const laptop = yield* signIn(email)
              const phone = yield* signIn(email)
              yield* call("POST", "/password-reset/request", { json: { email } })
              const token = yield* outbox.token("send_password_reset_email", email)
              const reply = yield* call("POST", "/password-reset/confirm", {
                json: { token, new_password: newPassword }
              })
              expect(reply.status).toBe(200)
              for (const session of [laptop, phone]) {
                expectProblem(yield* me(session.access), 401, "TokenBlacklistedError")
                expectProblem(yield* refresh(session.refresh), 401, "TokenBlacklistedError")
              }
              expectProblem(yield* login(email), 401, "AuthenticationError")
              const after = yield* signIn(email, newPassword)
              expect((yield* me(after.access)).body).toMatchObject({ is_verified: true })
              expectProblem(
                yield* call("POST", "/password-reset/confirm", {
                  json: { token, new_password: "yet another passphrase" }
                }),
                401,
                "TokenBlacklistedError"
              )
              expect((yield* outbox.next("after_password_reset", email))[0]).toMatchObject({ email })
            })
        )

        it.effect("a weak new password is 422 and does not spend the token; an earlier token dies with the reset", () =>
          Effect.gen(function* () {
            const email = uniqueEmail()
            yield* register(email)
            yield* call("POST", "/password-reset/request", { json: { email } })
            yield* call("POST", "/password-reset/request", { json: { email } })
            const first = yield* outbox.token("send_password_reset_email", email, 1)
            const second = yield* outbox.token("send_password_reset_email", email, 2)
            const weak = yield* call("POST", "/password-reset/confirm", {
              json: { token: second, new_password: "weak" }
            })
            expectProblem(weak, 422, "InvalidPasswordError")
            expect((yield* login(email)).status).toBe(200)
            const good = yield* call("POST", "/password-reset/confirm", {
              json: { token: second, new_password: newPassword }
            })
            expect(good.status).toBe(200)
            expectProblem(
              yield* call("POST", "/password-reset/confirm", { json: { token: first, new_password: newPassword } }),
              401,
              "TokenBlacklistedError"
            )
          })
        )

        it.effect("login, logout and change-password reach the deployment's handlers with the user", () =>
          Effect.gen(function* () {
            const email = uniqueEmail()
            yield* register(email)
            expect((yield* outbox.next("after_register", email))[0]).toMatchObject({ email, is_verified: false })
            const session = yield* signIn(email)
            const loggedIn = (yield* outbox.next("after_login", email))[0]
            expect(loggedIn).toMatchObject({ email, id: session.id, created_at: expect.any(String) })
            expect(loggedIn).not.toHaveProperty("hashed_password")
            yield* call("POST", "/change-password", {
              token: session.access,
              json: { current_password: password, new_password: newPassword }
            })
            expect((yield* outbox.next("after_password_change", email))[0]).toMatchObject({ email })
            yield* call("POST", "/logout", { token: session.access })
            expect((yield* outbox.next("after_logout", email))[0]).toMatchObject({ email })
          })
        )
      }
    )
  })
}

describe("SEND_VERIFICATION_ON_REGISTER=false", () => {
  const outbox = makeOutbox()
  layer(
    TestApp.layer(
      "memory:",
      { SERVICE_SEND_VERIFICATION_ON_REGISTER: "false" },
      { deployment: { events: outbox.handlers } }
    ),
    {
      excludeTestServices: true
    }
  )((it) => {
    it.effect("registration sends no verification mail", () =>
      Effect.gen(function* () {
        const email = uniqueEmail()
        yield* register(email)
        yield* outbox.next("after_register", email)
        expect(yield* outbox.count("send_verification_email", email)).toBe(0)
      })
    )
  })
})

describe("a failing event handler", () => {
  const failing = {
    after_login: () => {
      throw new Error("handler bug")
    },
    after_register: () => Promise.reject(new Error("webhook down"))
  }
  layer(TestApp.layer("memory:", {}, { deployment: { events: failing } }), { excludeTestServices: true })((it) => {
    it.effect("is logged and never fails the request", () =>
      Effect.gen(function* () {
        const email = uniqueEmail()
        expect((yield* register(email)).status).toBe(202)
        expect((yield* login(email)).status).toBe(200)
      })
    )
  })
})
