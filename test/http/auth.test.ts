import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Accounts } from "../../application/Accounts.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
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

for (const backend of TestApp.backends) {
  describe(`auth routes (${backend.name})`, () => {
    layer(TestApp.layer(backend), { excludeTestServices: true })((it) => {
      it.effect("register answers 202 with one generic message, new address or not, and creates the account once", () =>
        Effect.gen(function* () {
          const email = uniqueEmail()
          const first = yield* register(email)
          const second = yield* register(email, "another password entirely")
          expect(first.status).toBe(202)
          expect(second.status).toBe(202)
          expect(second.body).toEqual(first.body)
          expect(first.body).toEqual({ detail: expect.any(String) })
          // The account exists with the first password only.
          expect((yield* login(email)).status).toBe(200)
          expectProblem(yield* login(email, "another password entirely"), 401, "AuthenticationError")
        })
      )

      it.effect("register stores the address trimmed and lower-cased", () =>
        Effect.gen(function* () {
          const email = uniqueEmail()
          expect((yield* register(`  ${email.toUpperCase()} `)).status).toBe(202)
          const session = yield* signIn(email)
          expect(((yield* me(session.access)).body as { email: string }).email).toBe(email)
        })
      )

      it.effect("register refuses a weak password with 422 listing every broken rule, and creates nothing", () =>
        Effect.gen(function* () {
          const email = uniqueEmail()
          const reply = yield* register(email, "short")
          const problem = expectProblem(reply, 422, "InvalidPasswordError")
          expect(problem.errors).toEqual([{ path: "password", message: "must be at least 8 characters long" }])
          expectProblem(yield* login(email, "short"), 401, "AuthenticationError")
        })
      )

      it.effect("register refuses a field it does not declare, such as is_superuser, with 422", () =>
        Effect.gen(function* () {
          const email = uniqueEmail()
          const reply = yield* call("POST", "/register", { json: { email, password, is_superuser: true } })
          const problem = expectProblem(reply, 422, "ValidationError")
          expect(problem.errors?.map((e) => e.path)).toContain("is_superuser")
          expectProblem(yield* login(email), 401, "AuthenticationError")
        })
      )

      it.effect("register refuses a malformed email with 422", () =>
        Effect.gen(function* () {
          const problem = expectProblem(yield* register("not-an-email"), 422, "ValidationError")
          expect(problem.errors?.[0]?.path).toBe("email")
        })
      )

      it.effect("login answers a LoginResponse: token pair and the full user, never the hash", () =>
        Effect.gen(function* () {
          const email = uniqueEmail()
          const { settings } = yield* TestApp.TestApp
          yield* register(email)
          const reply = yield* login(email)
          expect(reply.status).toBe(200)
          expect(reply.headers.get("cache-control")).toBe("no-store")
          expect(reply.body).toEqual({
            access_token: expect.any(String),
            refresh_token: expect.any(String),
            token_type: "bearer",
            expires_in: 900,
            user: {
              // A JSON number for integer ids, else a string.
              id: settings.storage.userIdType === "integer" ? expect.any(Number) : expect.any(String),
              email,
              is_active: true,
              is_verified: false,
              is_superuser: false,
              created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
              roles: []
            }
          })
          expect(reply.text).not.toContain("hashed_password")
        })
      )

      it.effect("an unknown email and a wrong password get identical 401 bodies", () =>
        Effect.gen(function* () {
          const email = uniqueEmail()
          yield* register(email)
          const unknown = yield* login(uniqueEmail("nobody"))
          const wrong = yield* login(email, "not the password")
          expectProblem(unknown, 401, "AuthenticationError")
          expect(wrong.status).toBe(unknown.status)
          expect(wrong.body).toEqual(unknown.body)
          expect(wrong.headers.get("www-authenticate")).toBe(unknown.headers.get("www-authenticate"))
        })
      )

      it.effect("an inactive user cannot log in, with the same 401 as a wrong password", () =>
        Effect.gen(function* () {
          const email = uniqueEmail()
          yield* register(email)
          const accounts = yield* Accounts
          yield* accounts.setFlags(Email.make(email), { is_active: false })
          const inactive = yield* login(email)
          const wrong = yield* login(email, "not the password")
          expectProblem(inactive, 401, "AuthenticationError")
          expect(inactive.body).toEqual(wrong.body)
        })
      )

      it.effect("login without a password field, or with a number for it, is 422", () =>
        Effect.gen(function* () {
          expectProblem(yield* call("POST", "/login", { json: { email: uniqueEmail() } }), 422, "ValidationError")
          expectProblem(
            yield* call("POST", "/login", { json: { email: uniqueEmail(), password: 12345678 } }),
            422,
            "ValidationError"
          )
        })
      )

      it.effect("refresh rotates: the new pair works and the old access token still works until it expires", () =>
        Effect.gen(function* () {
          const session = yield* signUp()
          const reply = yield* refresh(session.refresh)
          expect(reply.status).toBe(200)
          const pair = reply.body as { access_token: string; refresh_token: string }
          expect(reply.body).toEqual({
            access_token: expect.any(String),
            refresh_token: expect.any(String),
            token_type: "bearer",
            expires_in: 900
          })
          expect(pair.refresh_token).not.toBe(session.refresh)
          expect((yield* me(pair.access_token)).status).toBe(200)
          expect((yield* refresh(pair.refresh_token)).status).toBe(200)
        })
      )

      it.effect(
        "a rotated refresh token presented again is 401, and then the family's newer tokens are refused too",
        () =>
          Effect.gen(function* () {
            const session = yield* signUp()
            const rotated = (yield* refresh(session.refresh)).body as { access_token: string; refresh_token: string }
            expectProblem(yield* refresh(session.refresh), 401, "TokenBlacklistedError")
            expectProblem(yield* refresh(rotated.refresh_token), 401, "TokenBlacklistedError")
            expectProblem(yield* me(rotated.access_token), 401, "TokenBlacklistedError")
            expectProblem(yield* me(session.access), 401, "TokenBlacklistedError")
            // Other sessions of the same user are untouched.
            const other = yield* signIn(session.email)
            expect((yield* me(other.access)).status).toBe(200)
          })
      )

      it.effect("refresh refuses garbage, an access token and a forged token with 401", () =>
        Effect.gen(function* () {
          const session = yield* signUp()
          expectProblem(yield* refresh("not-a-token"), 401, "TokenError")
          expectProblem(yield* refresh(session.access), 401, "TokenError")
          const [header, payload] = session.refresh.split(".")
          expectProblem(yield* refresh(`${header}.${payload}.${"A".repeat(43)}`), 401, "TokenError")
          expectProblem(yield* call("POST", "/refresh", { json: {} }), 422, "ValidationError")
        })
      )

      it.effect("an access token is refused where a refresh token is expected and the other way round", () =>
        Effect.gen(function* () {
          const session = yield* signUp()
          const reply = yield* me(session.refresh)
          const problem = expectProblem(reply, 401, "TokenError")
          expect(problem.detail).toContain("access")
          expect(reply.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"')
        })
      )

      it.effect("logout answers 204 and kills the presented access token and its family", () =>
        Effect.gen(function* () {
          const session = yield* signUp()
          const other = yield* signIn(session.email)
          const reply = yield* call("POST", "/logout", { token: session.access })
          expect(reply.status).toBe(204)
          expect(reply.text).toBe("")
          expectProblem(yield* me(session.access), 401, "TokenBlacklistedError")
          expectProblem(yield* refresh(session.refresh), 401, "TokenBlacklistedError")
          expectProblem(yield* call("POST", "/logout", { token: session.access }), 401, "TokenBlacklistedError")
          // The user's other session lives on.
          expect((yield* me(other.access)).status).toBe(200)
          expect((yield* refresh(other.refresh)).status).toBe(200)
        })
      )

      it.effect("logout without a token is 401", () =>
        Effect.gen(function* () {
          const reply = yield* call("POST", "/logout")
          expectProblem(reply, 401, "TokenError")
        })
      )

      it.effect("a user deleted behind the token's back is refused with 401", () =>
        Effect.gen(function* () {
          const session = yield* signUp()
          const users = yield* UserRepo
          yield* users.delete(session.userId as never)
          expectProblem(yield* me(session.access), 401, "TokenError")
        })
      )
    })
  })
}
