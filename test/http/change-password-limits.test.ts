import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call, expectProblem, login, password, signUp } from "../support/flows.js"
import * as TestApp from "../support/TestApp.js"

const newPassword = "a brand new passphrase"

/** A change-password call from a client address of its own, as a proxy in front reports it. */
const change = (access: string, current: string, from = "198.51.100.7") =>
  call("POST", "/change-password", {
    token: access,
    json: { current_password: current, new_password: newPassword },
    headers: { "x-forwarded-for": from }
  })

for (const backend of TestApp.backends) {
  describe(`change-password is no password oracle (${backend.name})`, () => {
    layer(
      TestApp.layer(backend, {
        SERVICE_AUTH_RATE_LIMIT_ENABLED: "true",
        SERVICE_TRUSTED_PROXY_HEADERS: "x-forwarded-for",
        SERVICE_MAX_LOGIN_ATTEMPTS: "100"
      }),
      { excludeTestServices: true }
    )((it) => {
      it.effect(
        "five tries a minute per signed-in user, whatever the client address: then 429, even the right one",
        () =>
          Effect.gen(function* () {
            const victim = yield* signUp("oracle")
            for (let i = 0; i < 5; i++) {
              const reply = yield* change(victim.access, `guess number ${i}`, `203.0.113.${i}`)
              expectProblem(reply, 400, "AuthenticationError")
            }
            const refused = expectProblem(
              yield* change(victim.access, password, "203.0.113.99"),
              429,
              "RateLimitedError"
            )
            expect(refused.status).toBe(429)
            const retryAfter = Number((yield* change(victim.access, password)).headers.get("retry-after"))
            expect(retryAfter).toBeGreaterThanOrEqual(1)
            expect(retryAfter).toBeLessThanOrEqual(60)
            // The password did not change, and another user behind the same address is not limited.
            expect((yield* login(victim.email, password)).status).toBe(200)
            const other = yield* signUp("bystander")
            expect((yield* change(other.access, password, "203.0.113.1")).status).toBe(200)
          })
      )
    })

    layer(TestApp.layer(backend, { SERVICE_MAX_LOGIN_ATTEMPTS: "3" }), { excludeTestServices: true })((it) => {
      it.effect("a wrong current password counts toward the account's lockout, and a locked account answers 423", () =>
        Effect.gen(function* () {
          const victim = yield* signUp("locked")
          for (let i = 0; i < 3; i++) {
            expectProblem(yield* change(victim.access, `guess number ${i}`), 400, "AuthenticationError")
          }
          const locked = expectProblem(yield* change(victim.access, password), 423, "AccountLockedError")
          expect(locked.status).toBe(423)
          expectProblem(yield* login(victim.email, password), 423, "AccountLockedError")
        })
      )

      it.effect("failed sign-ins count toward the same lock", () =>
        Effect.gen(function* () {
          const victim = yield* signUp("signin-locked")
          for (let i = 0; i < 3; i++) expectProblem(yield* login(victim.email, "wrong"), 401, "AuthenticationError")
          expectProblem(yield* change(victim.access, password), 423, "AccountLockedError")
        })
      )

      it.effect("a right current password clears the count", () =>
        Effect.gen(function* () {
          const user = yield* signUp("clears")
          for (let i = 0; i < 2; i++)
            expectProblem(yield* change(user.access, "wrong guess"), 400, "AuthenticationError")
          expect((yield* change(user.access, password)).status).toBe(200)
          for (let i = 0; i < 2; i++) expectProblem(yield* login(user.email, "wrong"), 401, "AuthenticationError")
          expect((yield* login(user.email, newPassword)).status).toBe(200)
        })
      )
    })
  })
}
