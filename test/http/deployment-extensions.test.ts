import { describe, expect, layer } from "@effect/vitest"
import { Effect, Schema } from "effect"
import type { Deployment } from "../../index.js"
import { call, expectProblem, login, me, password, refresh, uniqueEmail } from "../support/flows.js"
import * as TestApp from "../support/TestApp.js"

/** A deployment with custom fields, a password policy, custom claims and a subset of groups. */
const deployment: Deployment = {
  userFields: {
    display_name: Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(40)),
    age: Schema.Int.pipe(Schema.between(0, 150)),
    tier: Schema.Literal("free", "pro")
  },
  registration: { require: ["display_name"], accept: ["age"] },
  protectedFields: ["tier"],
  passwordPolicy: {
    min_length: 10,
    require_uppercase: true,
    require_digit: true,
    require_special: true,
    blocked_passwords: ["Password123!"]
  },
  customClaims: (user) => ({ name: user.display_name, plan: user.tier ?? "free" }),
  routeGroups: ["auth", "profile", "sessions"]
}

const strong = "Correct horse 42!"

/** The claims of a JWT, decoded without checking it (the service did). */
const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString("utf8")) as {
    extra: Record<string, unknown>
  }

const registerWith = (body: Record<string, unknown>) => call("POST", "/register", { json: body })

const signUpWith = (fields: Record<string, unknown>) =>
  Effect.gen(function* () {
    const email = uniqueEmail("ext")
    const reply = yield* registerWith({ email, password: strong, ...fields })
    expect(reply.status).toBe(201)
    const signedIn = yield* login(email, strong)
    expect(signedIn.status).toBe(200)
    const body = signedIn.body as { access_token: string; refresh_token: string; user: Record<string, unknown> }
    return { email, access: body.access_token, refresh: body.refresh_token, user: body.user }
  })

for (const backend of TestApp.backends) {
  describe(`deployment extensions (${backend.name})`, () => {
    layer(TestApp.layer(backend.databaseUrl, { SERVICE_PREVENT_REGISTRATION_ENUMERATION: "false" }, { deployment }), {
      excludeTestServices: true
    })((it) => {
      it.effect("a register without the required display_name is 422 naming it; extra fields are written", () =>
        Effect.gen(function* () {
          const email = uniqueEmail("ext")
          const missing = expectProblem(yield* registerWith({ email, password: strong }), 422, "ValidationError")
          expect(missing.errors?.map((error) => error.path)).toContain("display_name")
          const unknown = expectProblem(
            yield* registerWith({ email, password: strong, display_name: "Al", nickname: "x" }),
            422,
            "ValidationError"
          )
          expect(JSON.stringify(unknown.errors)).toContain("nickname")
          // Accepted but not a registration field: tier is declared, not accepted at registration.
          expectProblem(
            yield* registerWith({ email, password: strong, display_name: "Al", tier: "pro" }),
            422,
            "ValidationError"
          )
          expectProblem(
            yield* registerWith({ email, password: strong, display_name: "Al", age: -1 }),
            422,
            "ValidationError"
          )
          expect((yield* login(email, strong)).status).toBe(401)

          const session = yield* signUpWith({ display_name: "  Alice  ", age: 30 })
          expect(session.user).toMatchObject({ email: session.email, display_name: "Alice", age: 30 })
          const mine = yield* me(session.access)
          expect(mine.status).toBe(200)
          expect(mine.body).toMatchObject({ display_name: "Alice", age: 30 })
          expect(mine.body).not.toHaveProperty("tier")
        })
      )

      it.effect("PATCH /me edits a custom field; a protected field or a bad value is 422 and changes nothing", () =>
        Effect.gen(function* () {
          const session = yield* signUpWith({ display_name: "Bob" })
          const edited = yield* call("PATCH", "/me", {
            token: session.access,
            json: { display_name: "Robert", age: 41 }
          })
          expect(edited.status).toBe(200)
          expect(edited.body).toMatchObject({ display_name: "Robert", age: 41 })
          const before = (yield* me(session.access)).body
          expect(before).toMatchObject({ display_name: "Robert", age: 41 })

          const protectedField = expectProblem(
            yield* call("PATCH", "/me", { token: session.access, json: { tier: "pro", display_name: "Mallory" } }),
            422,
            "ValidationError"
          )
          expect(protectedField.errors).toEqual([{ path: "tier", message: "is protected and cannot be changed" }])
          const badValue = expectProblem(
            yield* call("PATCH", "/me", { token: session.access, json: { age: "old", display_name: "Mallory" } }),
            422,
            "ValidationError"
          )
          expect(badValue.errors?.map((error) => error.path)).toEqual(["age"])
          expectProblem(
            yield* call("PATCH", "/me", { token: session.access, json: { display_name: "" } }),
            422,
            "ValidationError"
          )
          expect((yield* me(session.access)).body).toEqual(before)
        })
      )

      it.effect("the deployment's password policy refuses per rule, listing every broken rule", () =>
        Effect.gen(function* () {
          const email = uniqueEmail("ext")
          const weak = expectProblem(
            yield* registerWith({ email, password: "short", display_name: "Pw" }),
            422,
            "InvalidPasswordError"
          )
          const text = JSON.stringify(weak)
          for (const rule of ["at least 10 characters", "uppercase", "digit", "special"]) expect(text).toContain(rule)
          const blocked = expectProblem(
            yield* registerWith({ email, password: "password123!", display_name: "Pw" }),
            422,
            "InvalidPasswordError"
          )
          expect(JSON.stringify(blocked)).toContain("too common")
          expect(JSON.stringify(blocked)).not.toContain("digit")
          expect((yield* registerWith({ email, password: strong, display_name: "Pw" })).status).toBe(201)
        })
      )

      it.effect("custom claims are stamped into the access token's extra and change after a refresh", () =>
        Effect.gen(function* () {
          const session = yield* signUpWith({ display_name: "Carol" })
          expect(claimsOf(session.access).extra).toEqual({ name: "Carol", plan: "free" })
          const edited = yield* call("PATCH", "/me", { token: session.access, json: { display_name: "Caroline" } })
          expect(edited.status).toBe(200)
          expect(claimsOf(session.access).extra).toEqual({ name: "Carol", plan: "free" })
          const renewed = yield* refresh(session.refresh)
          expect(renewed.status).toBe(200)
          const pair = renewed.body as { access_token: string }
          expect(claimsOf(pair.access_token).extra).toEqual({ name: "Caroline", plan: "free" })
        })
      )

      it.effect("routes of an omitted group answer 404; exposed groups still answer", () =>
        Effect.gen(function* () {
          const session = yield* signUpWith({ display_name: "Dan" })
          expectProblem(yield* call("POST", "/verify-email/request", { token: session.access }), 404, "NotFoundError")
          expectProblem(
            yield* call("POST", "/password-reset/request", { json: { email: session.email } }),
            404,
            "NotFoundError"
          )
          expectProblem(
            yield* call("POST", "/admin/assign-role", { token: session.access, json: { user_id: "x", role: "r" } }),
            404,
            "NotFoundError"
          )
          expect((yield* call("GET", "/sessions", { token: session.access })).status).toBe(200)
          const openapi = yield* call("GET", "/openapi.json")
          expect(openapi.text).not.toContain("/verify-email/request")
          expect(openapi.text).toContain("display_name")
        })
      )
    })
  })

  describe(`LOGIN_FIELD=username (${backend.name})`, () => {
    const usernames: Deployment = {
      userFields: { username: Schema.Trim.pipe(Schema.pattern(/^[a-z0-9_]{3,20}$/)) }
    }
    layer(
      TestApp.layer(
        backend.databaseUrl,
        { SERVICE_LOGIN_FIELD: "username", SERVICE_PREVENT_REGISTRATION_ENUMERATION: "false" },
        { deployment: usernames }
      ),
      { excludeTestServices: true }
    )((it) => {
      it.effect("registration requires the username, login goes by it, a duplicate is refused", () =>
        Effect.gen(function* () {
          const name = `u_${Math.random().toString(36).slice(2, 10)}`
          const email = uniqueEmail("login")
          const missing = expectProblem(yield* registerWith({ email, password }), 422, "ValidationError")
          expect(missing.errors?.map((error) => error.path)).toContain("username")
          expect((yield* registerWith({ email, password, username: name })).status).toBe(201)
          const signedIn = yield* call("POST", "/login", { json: { username: name, password } })
          expect(signedIn.status).toBe(200)
          expect((signedIn.body as { user: Record<string, unknown> }).user).toMatchObject({ email, username: name })
          expectProblem(yield* call("POST", "/login", { json: { email, password } }), 422, "ValidationError")
          expectProblem(
            yield* call("POST", "/login", { json: { username: "nobody_here", password } }),
            401,
            "AuthenticationError"
          )

          const duplicate = yield* registerWith({ email: uniqueEmail("dup"), password, username: name })
          expectProblem(duplicate, 409, "UserAlreadyExistsError")

          const other = `v_${Math.random().toString(36).slice(2, 10)}`
          const otherEmail = uniqueEmail("other")
          expect((yield* registerWith({ email: otherEmail, password, username: other })).status).toBe(201)
          const token = (
            (yield* call("POST", "/login", { json: { username: other, password } })).body as {
              access_token: string
            }
          ).access_token
          expectProblem(yield* call("PATCH", "/me", { token, json: { username: name } }), 409, "UserAlreadyExistsError")
          expect((yield* me(token)).body).toMatchObject({ username: other })
        })
      )
    })
  })
}

describe("a custom claims function that throws", () => {
  const failing: Deployment = {
    customClaims: () => {
      throw new Error("claims store down")
    }
  }
  layer(TestApp.layer("memory:", {}, { deployment: failing }), { excludeTestServices: true })((it) => {
    it.effect("refuses to issue a token without its claims: 500, logged under the request id the client sees", () =>
      Effect.gen(function* () {
        const email = uniqueEmail("claims")
        expect((yield* call("POST", "/register", { json: { email, password } })).status).toBe(202)
        const failed = yield* login(email, password)
        const problem = expectProblem(failed, 500, "InternalError")
        const requestId = failed.headers.get("x-request-id")
        expect(requestId).toMatch(/^[0-9a-f-]{36}$/)
        expect(problem.detail).toContain(`request id ${requestId}`)
      })
    )
  })
})
