import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { expectProblem, login, password, register, uniqueEmail } from "../support/flows.js"
import * as TestApp from "../support/TestApp.js"

const wrong = "not the password at all"

const expectLocked = (reply: TestApp.Reply) => {
  const problem = expectProblem(reply, 423, "AccountLockedError")
  const retryAfter = Number(reply.headers.get("retry-after"))
  expect(Number.isInteger(retryAfter)).toBe(true)
  expect(retryAfter).toBeGreaterThan(15 * 60 - 5)
  expect(retryAfter).toBeLessThanOrEqual(15 * 60)
  expect(reply.text).not.toContain("access_token")
  return problem
}

for (const backend of TestApp.backends) {
  describe(`account lockout (${backend.name})`, () => {
    layer(TestApp.layer(backend), { excludeTestServices: true })((it) => {
      it.effect("5 failed logins then the right password: 423 with Retry-After; the 5th failure is still 401", () =>
        Effect.gen(function* () {
          const email = uniqueEmail()
          yield* register(email)
          for (let i = 0; i < 5; i++) expectProblem(yield* login(email, wrong), 401, "AuthenticationError")
          expectLocked(yield* login(email))
          expectLocked(yield* login(email, wrong))
          // Another spelling of the same address is the same identifier.
          expectLocked(yield* login(`  ${email.toUpperCase()}`))
          // Other accounts are untouched.
          const other = uniqueEmail()
          yield* register(other)
          expect((yield* login(other)).status).toBe(200)
        })
      )

      it.effect("an unknown email locks exactly like a known one: same statuses, bodies and headers", () =>
        Effect.gen(function* () {
          const known = uniqueEmail("known")
          const unknown = uniqueEmail("unknown")
          yield* register(known)
          for (let i = 0; i < 5; i++) {
            const a = yield* login(known, wrong)
            const b = yield* login(unknown, wrong)
            expect(b.status).toBe(a.status)
            expect(b.body).toEqual(a.body)
          }
          const a = yield* login(known)
          const b = yield* login(unknown, password)
          expectLocked(a)
          expectLocked(b)
          // The two locks began one request apart, so their seconds left may differ by one.
          const { retry_after: aLeft, ...aRest } = a.body as { retry_after: number }
          const { retry_after: bLeft, ...bRest } = b.body as { retry_after: number }
          expect(bRest).toEqual(aRest)
          expect(Math.abs(bLeft - aLeft)).toBeLessThanOrEqual(1)
          expect(b.headers.get("www-authenticate")).toBe(a.headers.get("www-authenticate"))
          expect(
            Math.abs(Number(b.headers.get("retry-after")) - Number(a.headers.get("retry-after")))
          ).toBeLessThanOrEqual(1)
        })
      )

      it.effect("a successful login resets the count", () =>
        Effect.gen(function* () {
          const email = uniqueEmail()
          yield* register(email)
          for (let i = 0; i < 4; i++) expectProblem(yield* login(email, wrong), 401, "AuthenticationError")
          expect((yield* login(email)).status).toBe(200)
          for (let i = 0; i < 4; i++) expectProblem(yield* login(email, wrong), 401, "AuthenticationError")
          expect((yield* login(email)).status).toBe(200)
        })
      )
    })
  })

  describe(`lockout switched off (${backend.name})`, () => {
    layer(TestApp.layer(backend, { SERVICE_LOCKOUT_ENABLED: "false" }), { excludeTestServices: true })((it) => {
      it.effect("LOCKOUT_ENABLED=false: failures never lock", () =>
        Effect.gen(function* () {
          const email = uniqueEmail()
          yield* register(email)
          for (let i = 0; i < 7; i++) expectProblem(yield* login(email, wrong), 401, "AuthenticationError")
          expect((yield* login(email)).status).toBe(200)
        })
      )
    })
  })
}
