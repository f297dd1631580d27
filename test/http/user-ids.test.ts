import { describe, expect, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { Accounts } from "../../application/Accounts.js"
import { Email } from "../../domain/User.js"
import { call, expectProblem, login, me, password, register, signIn, uniqueEmail } from "../support/flows.js"
import * as TestApp from "../support/TestApp.js"

/** The `sub` claim of an access token, read without verifying it. */
const subOf = (token: string) =>
  (JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")) as { sub: unknown }).sub

const signUpSuperuser = Effect.gen(function* () {
  const email = uniqueEmail("root")
  yield* (yield* Accounts).createSuperuser(Email.make(email), Redacted.make(password))
  return yield* signIn(email)
})

const rolesOf = (token: string) => Effect.map(me(token), (reply) => (reply.body as { roles: Array<string> }).roles)

for (const store of ["sqlite::memory:", "memory:"]) {
  describe(`USER_ID_TYPE=integer (${store})`, () => {
    layer(
      TestApp.layer(store, { SERVICE_USER_ID_TYPE: "integer", SERVICE_PREVENT_REGISTRATION_ENUMERATION: "false" }),
      { excludeTestServices: true }
    )((it) => {
      it.effect("the user object's id is a JSON number, counted up by the store; the token's sub is its string", () =>
        Effect.gen(function* () {
          const first = yield* register(uniqueEmail())
          const second = yield* register(uniqueEmail())
          expect(first.status).toBe(201)
          const firstId = (first.body as { id: unknown }).id
          const secondId = (second.body as { id: unknown }).id
          expect(Number.isInteger(firstId)).toBe(true)
          expect(secondId).toBe((firstId as number) + 1)

          const email = (second.body as { email: string }).email
          const loggedIn = yield* login(email)
          const body = loggedIn.body as { access_token: string; user: { id: unknown } }
          expect(body.user.id).toBe(secondId)
          expect(subOf(body.access_token)).toBe(String(secondId))
          expect((yield* me(body.access_token)).body).toMatchObject({ id: secondId, email })
        })
      )

      it.effect("admin takes user_id as a JSON number or a numeric string, and refuses other forms", () =>
        Effect.gen(function* () {
          const admin = yield* signUpSuperuser
          const targetEmail = uniqueEmail("target")
          expect((yield* register(targetEmail)).status).toBe(201)
          const target = yield* signIn(targetEmail)
          expect(typeof target.id).toBe("number")
          const post = (path: string, user_id: unknown) =>
            call("POST", path, { token: admin.access, json: { user_id, role: "editor" } })

          expect((yield* post("/admin/assign-role", target.id)).status).toBe(200)
          expect(yield* rolesOf(target.access)).toEqual(["editor"])
          expect((yield* post("/admin/remove-role", String(target.id))).status).toBe(200)
          expect(yield* rolesOf(target.access)).toEqual([])

          expectProblem(yield* post("/admin/assign-role", 999_999_999), 404, "UserNotFoundError")
          expectProblem(yield* post("/admin/assign-role", "999999999"), 404, "UserNotFoundError")
          for (const malformed of ["0190f0c2-0000-7000-8000-00000000dead", "abc", 0, -3, 2.5, "07", null]) {
            const problem = expectProblem(yield* post("/admin/assign-role", malformed), 422, "ValidationError")
            expect(problem.errors?.map((error) => error.path)).toContain("user_id")
          }
        })
      )
    })
  })
}

describe("USER_ID_TYPE=string (memory)", () => {
  layer(TestApp.layer("memory:", { SERVICE_USER_ID_TYPE: "string" }), { excludeTestServices: true })((it) => {
    it.effect("ids are random URL-safe strings, in the user object, the token and the admin routes", () =>
      Effect.gen(function* () {
        const email = uniqueEmail()
        expect((yield* register(email)).status).toBe(202)
        const session = yield* signIn(email)
        expect(session.id).toEqual(expect.stringMatching(/^[A-Za-z0-9_-]{22}$/))
        expect(subOf(session.access)).toBe(session.id)
        const admin = yield* signUpSuperuser
        expect(admin.id).not.toBe(session.id)
        const assigned = yield* call("POST", "/admin/assign-role", {
          token: admin.access,
          json: { user_id: session.id, role: "editor" }
        })
        expect(assigned.status).toBe(200)
        expect(yield* rolesOf(session.access)).toEqual(["editor"])
        expectProblem(
          yield* call("POST", "/admin/assign-role", { token: admin.access, json: { user_id: 42, role: "editor" } }),
          422,
          "ValidationError"
        )
      })
    )
  })
})
