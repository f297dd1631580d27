import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { expectProblem, login, register, uniqueEmail } from "../support/flows.js"
import * as TestApp from "../support/TestApp.js"

for (const backend of TestApp.backends) {
  describe(`registration without enumeration prevention (${backend.name})`, () => {
    layer(TestApp.layer(backend, { SERVICE_PREVENT_REGISTRATION_ENUMERATION: "false" }), {
      excludeTestServices: true
    })((it) => {
      it.effect("register answers 201 and the created user, then 409 for the same address", () =>
        Effect.gen(function* () {
          const email = uniqueEmail()
          const { settings } = yield* TestApp.TestApp
          const created = yield* register(email)
          expect(created.status).toBe(201)
          expect(created.body).toEqual({
            // A JSON number for integer ids, else a string.
            id: settings.storage.userIdType === "integer" ? expect.any(Number) : expect.any(String),
            email,
            is_active: true,
            is_verified: false,
            is_superuser: false,
            created_at: expect.any(String),
            roles: []
          })
          expectProblem(
            yield* register(email.toUpperCase(), "another password entirely"),
            409,
            "UserAlreadyExistsError"
          )
          expect((yield* login(email)).status).toBe(200)
          expectProblem(yield* login(email, "another password entirely"), 401, "AuthenticationError")
        })
      )
    })
  })
}
