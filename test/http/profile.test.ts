import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { Accounts } from "../../application/Accounts.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { Sessions } from "../../application/Sessions.js"
import { Email } from "../../domain/User.js"
import {
  call,
  expectProblem,
  login,
  me,
  password,
  refresh,
  register,
  signIn,
  signUp,
  uniqueEmail
} from "../support/flows.js"
import * as TestApp from "../support/TestApp.js"

const newPassword = "a brand new passphrase"

for (const backend of TestApp.backends) {
  describe(`profile routes (${backend.name})`, () => {
    layer(TestApp.layer(backend), { excludeTestServices: true })((it) => {
      it.effect("GET /me answers the user object; no token, a bad token or a bad scheme is 401", () =>
        Effect.gen(function* () {
          const session = yield* signUp()
          const reply = yield* me(session.access)
          expect(reply.status).toBe(200)
          expect(reply.body).toMatchObject({ id: session.id, email: session.email, roles: [], permissions: [] })
          expect(Object.keys(reply.body as object).sort()).toEqual(
            ["created_at", "email", "id", "is_active", "is_superuser", "is_verified", "roles", "permissions"].sort()
          )
          expectProblem(yield* call("GET", "/me"), 401, "TokenError")
          expectProblem(yield* me("garbage"), 401, "TokenError")
          expectProblem(
            yield* call("GET", "/me", { headers: { authorization: `Basic ${session.access}` } }),
            401,
            "TokenError"
          )
        })
      )

      it.effect("GET /me/verified is 403 for an unverified user and 200 once verified", () =>
        Effect.gen(function* () {
          const session = yield* signUp()
          expectProblem(yield* call("GET", "/me/verified", { token: session.access }), 403, "AuthorizationError")
          const accounts = yield* Accounts
          yield* accounts.setFlags(Email.make(session.email), { is_verified: true })
          const reply = yield* call("GET", "/me/verified", { token: session.access })
          expect(reply.status).toBe(200)
          expect(reply.body).toMatchObject({ id: session.id, is_verified: true })
        })
      )

      it.effect("PATCH /me naming a protected field is 422 naming it, and nothing changes", () =>
        Effect.gen(function* () {
          const session = yield* signUp()
          const before = (yield* me(session.access)).body
          for (const field of ["email", "is_superuser", "is_active", "is_verified", "id", "roles", "password"]) {
            const reply = yield* call("PATCH", "/me", { token: session.access, json: { [field]: "x" } })
            const problem = expectProblem(reply, 422, "ValidationError")
            expect(problem.errors).toEqual([{ path: field, message: "is protected and cannot be changed" }])
          }
          expect((yield* me(session.access)).body).toEqual(before)
        })
      )

      it.effect(
        "PATCH /me naming an unknown field is 422; a mixed patch lists every offender and applies nothing",
        () =>
          Effect.gen(function* () {
            const session = yield* signUp()
            const before = (yield* me(session.access)).body
            const reply = yield* call("PATCH", "/me", {
              token: session.access,
              json: { nickname: "bob", is_superuser: true }
            })
            const problem = expectProblem(reply, 422, "ValidationError")
            expect(problem.errors).toEqual([
              { path: "nickname", message: "is not a profile field" },
              { path: "is_superuser", message: "is protected and cannot be changed" }
            ])
            expect((yield* me(session.access)).body).toEqual(before)
          })
      )

      it.effect("PATCH /me with {} answers 200 and the unchanged user; a non-object body is 422", () =>
        Effect.gen(function* () {
          const session = yield* signUp()
          const before = (yield* me(session.access)).body
          const reply = yield* call("PATCH", "/me", { token: session.access, json: {} })
          expect(reply.status).toBe(200)
          expect(reply.body).toEqual(before)
          expectProblem(yield* call("PATCH", "/me", { token: session.access, json: ["email"] }), 422, "ValidationError")
        })
      )

      it.effect("DELETE /me answers 204, ends every session and frees the address", () =>
        Effect.gen(function* () {
          const session = yield* signUp()
          const other = yield* signIn(session.email)
          const reply = yield* call("DELETE", "/me", { token: session.access })
          expect(reply.status).toBe(204)
          for (const token of [session.access, other.access]) expect((yield* me(token)).status).toBe(401)
          for (const token of [session.refresh, other.refresh]) expect((yield* refresh(token)).status).toBe(401)
          expectProblem(yield* login(session.email), 401, "AuthenticationError")
          expect((yield* register(session.email, newPassword)).status).toBe(202)
          expect((yield* login(session.email, newPassword)).status).toBe(200)
        })
      )

      it.effect("change-password without or with a wrong current password is 400 AuthenticationError", () =>
        Effect.gen(function* () {
          const session = yield* signUp()
          const missing = yield* call("POST", "/change-password", {
            token: session.access,
            json: { new_password: newPassword }
          })
          expectProblem(missing, 400, "AuthenticationError")
          const wrong = yield* call("POST", "/change-password", {
            token: session.access,
            json: { current_password: "not the password", new_password: newPassword }
          })
          expectProblem(wrong, 400, "AuthenticationError")
          expect((yield* login(session.email)).status).toBe(200)
        })
      )

      it.effect("change-password refuses a weak new password with 422 and keeps the old one", () =>
        Effect.gen(function* () {
          const session = yield* signUp()
          const reply = yield* call("POST", "/change-password", {
            token: session.access,
            json: { current_password: password, new_password: "tiny" }
          })
          expectProblem(reply, 422, "InvalidPasswordError")
          expect((yield* login(session.email)).status).toBe(200)
        })
      )

      it.effect("change-password ends every other session but keeps the caller's", () =>
        Effect.gen(function* () {
          const caller = yield* signUp()
          const laptop = yield* signIn(caller.email)
          const phone = yield* signIn(caller.email)
          const reply = yield* call("POST", "/change-password", {
            token: caller.access,
            json: { current_password: password, new_password: newPassword }
          })
          expect(reply.status).toBe(200)
          expect(reply.body).toEqual({ detail: expect.any(String) })
          // The caller's session goes on, access and refresh.
          expect((yield* me(caller.access)).status).toBe(200)
          expect((yield* refresh(caller.refresh)).status).toBe(200)
          // Every other session is over, access tokens included.
          for (const other of [laptop, phone]) {
            expectProblem(yield* me(other.access), 401, "TokenBlacklistedError")
            expectProblem(yield* refresh(other.refresh), 401, "TokenBlacklistedError")
          }
          expectProblem(yield* login(caller.email), 401, "AuthenticationError")
          expect((yield* login(caller.email, newPassword)).status).toBe(200)
        })
      )

      it.effect("a user without a password (signed up through a provider) sets one without current_password", () =>
        Effect.gen(function* () {
          const users = yield* UserRepo
          const sessions = yield* Sessions
          const email = Email.make(uniqueEmail("oauth"))
          const user = yield* users.create({
            email,
            hashed_password: Option.none(),
            is_active: true,
            is_verified: true,
            is_superuser: false
          })
          expectProblem(yield* login(email), 401, "AuthenticationError")
          const pair = yield* sessions.start(user, { ip_address: null, user_agent: null })
          const reply = yield* call("POST", "/change-password", {
            token: pair.access_token,
            json: { new_password: newPassword }
          })
          expect(reply.status).toBe(200)
          expect((yield* login(email, newPassword)).status).toBe(200)
        })
      )
    })
  })
}
