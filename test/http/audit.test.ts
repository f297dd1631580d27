import { describe, expect, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { Accounts } from "../../application/Accounts.js"
import { Email } from "../../domain/User.js"
import {
  call,
  expectProblem,
  login,
  me,
  password,
  refresh,
  register,
  type Session,
  signIn,
  signUp,
  uniqueEmail
} from "../support/flows.js"
import { makeOutbox } from "../support/Outbox.js"
import * as TestApp from "../support/TestApp.js"

interface Entry {
  readonly id: number
  readonly occurred_at: string
  readonly type: string
  readonly user_id: string | number | null
  readonly actor: { readonly kind: string; readonly id: string | number | null }
  readonly ip_address: string | null
  readonly user_agent: string | null
  readonly details: Record<string, unknown>
}
interface Page {
  readonly events: ReadonlyArray<Entry>
  readonly next_cursor: string | null
}

const agent = { "user-agent": "audit-test/1.0" }

/** A superuser made by the operator (as `create-superuser` does), signed in. */
const signUpSuperuser = Effect.gen(function* () {
  const accounts = yield* Accounts
  const email = uniqueEmail("root")
  yield* accounts.createSuperuser(Email.make(email), Redacted.make(password))
  return yield* signIn(email)
})

/** GET /admin/audit with these query parameters, as `admin`. */
const audit = (admin: Session, query: Record<string, string>) =>
  call("GET", `/admin/audit?${new URLSearchParams(query)}`, { token: admin.access })

const pageOf = (admin: Session, query: Record<string, string>) =>
  Effect.map(audit(admin, query), (reply) => {
    expect(reply.status).toBe(200)
    return reply.body as Page
  })

/** The types of a user's entries, newest first. */
const typesOf = (admin: Session, userId: string) =>
  Effect.map(pageOf(admin, { user_id: userId }), (page) => page.events.map((entry) => entry.type))

const familyOf = (token: string) =>
  (JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")) as { family_id: string }).family_id

for (const backend of TestApp.backends) {
  describe(`audit log through the API (${backend.name})`, () => {
    const outbox = makeOutbox()
    layer(TestApp.layer(backend, {}, { deployment: { events: outbox.handlers } }), { excludeTestServices: true })(
      (it) => {
        it.effect("sign-ins and their failures are recorded with the client; an unknown login by its identifier", () =>
          Effect.gen(function* () {
            const admin = yield* signUpSuperuser
            const email = uniqueEmail("alice")
            yield* register(email)
            const signedIn = yield* login(email, password, agent)
            expect(signedIn.status).toBe(200)
            const user = (signedIn.body as { user: { id: string | number } }).user
            expect((yield* login(email, "not the password", agent)).status).toBe(401)
            const unknown = uniqueEmail("Nobody")
            expect((yield* login(`  ${unknown.toUpperCase()} `, password, agent)).status).toBe(401)

            const [failed, succeeded] = (yield* pageOf(admin, { user_id: String(user.id) })).events
            expect(succeeded).toMatchObject({
              type: "sign_in.succeeded",
              user_id: user.id,
              actor: { kind: "user", id: user.id },
              ip_address: "127.0.0.1",
              user_agent: "audit-test/1.0",
              details: { method: "password", family_id: expect.any(String) }
            })
            expect(Date.parse(succeeded?.occurred_at ?? "")).toBeGreaterThan(Date.now() - 60_000)
            expect(failed).toMatchObject({
              type: "sign_in.failed",
              user_id: user.id,
              actor: { kind: "none", id: null },
              details: { method: "password", reason: "wrong_password" }
            })
            const failures = (yield* pageOf(admin, { type: "sign_in.failed" })).events
            // Trimmed and lower-cased, as the login field is compared.
            const identifier = unknown.toLowerCase()
            expect(failures.find((entry) => entry.details.identifier === identifier)).toMatchObject({
              user_id: null,
              details: { method: "password", reason: "unknown_account", identifier }
            })
            // The attempted password is nowhere in the log.
            expect(JSON.stringify(failures)).not.toContain("not the password")
          })
        )

        it.effect("a lockout is recorded once, for the identifier", () =>
          Effect.gen(function* () {
            const admin = yield* signUpSuperuser
            const target = uniqueEmail("locked")
            for (let i = 0; i < 6; i++) yield* login(target, "wrong password")
            const locks = (yield* pageOf(admin, { type: "account.locked" })).events.filter(
              (entry) => entry.details.identifier === target
            )
            expect(locks).toHaveLength(1)
            expect(locks[0]).toMatchObject({ user_id: null, details: { failures: 5, locked_minutes: 15 } })
          })
        )

        it.effect("refresh reuse, session revocations, a password change and an account's deletion are recorded", () =>
          Effect.gen(function* () {
            const admin = yield* signUpSuperuser
            const user = yield* signUp("sessions")
            const other = yield* signIn(user.email)
            const third = yield* signIn(user.email)
            expect((yield* refresh(third.refresh)).status).toBe(200)
            expect((yield* refresh(third.refresh)).status).toBe(401)
            const revoked = yield* call("DELETE", `/sessions/${familyOf(other.access)}`, { token: user.access })
            expect(revoked.status).toBe(204)
            const fourth = yield* signIn(user.email)
            const others = yield* call("POST", "/sessions/revoke-others", { token: user.access })
            expect(others.body).toMatchObject({ revoked: 1 })
            const newPassword = "a brand new passphrase 42"
            const changed = yield* call("POST", "/change-password", {
              token: user.access,
              json: { current_password: password, new_password: newPassword }
            })
            expect(changed.status).toBe(200)
            expect((yield* call("POST", "/logout", { token: user.access })).status).toBe(204)
            const again = yield* signIn(user.email, newPassword)
            expect((yield* call("DELETE", "/me", { token: again.access })).status).toBe(204)

            const entries = (yield* pageOf(admin, { user_id: user.userId })).events
            expect(entries.map((entry) => entry.type)).toEqual([
              "account.deleted",
              "sign_in.succeeded",
              "session.logged_out",
              "password.changed",
              "sessions.revoked_others",
              "sign_in.succeeded",
              "session.revoked",
              "refresh.reuse_detected",
              "sign_in.succeeded",
              "sign_in.succeeded",
              "sign_in.succeeded"
            ])
            const byType = (type: string) => entries.find((entry) => entry.type === type)
            expect(byType("refresh.reuse_detected")).toMatchObject({
              actor: { kind: "none" },
              details: { family_id: familyOf(third.access) }
            })
            expect(byType("session.revoked")?.details).toEqual({ family_id: familyOf(other.access) })
            expect(byType("sessions.revoked_others")?.details).toEqual({ revoked: 1 })
            expect(byType("password.changed")).toMatchObject({
              actor: { kind: "user", id: user.id },
              // revoke-others had ended the rest already.
              details: { sessions_ended: 0 }
            })
            expect(byType("session.logged_out")?.details).toEqual({ family_id: familyOf(user.access) })
            expect(byType("account.deleted")?.details).toEqual({ sessions_ended: 1 })
            expect(fourth.userId).toBe(user.userId)
            expect(JSON.stringify(entries)).not.toContain(newPassword)
            expect(JSON.stringify(entries)).not.toContain(third.refresh)
          })
        )

        it.effect("email verification and a password reset are recorded, never their tokens", () =>
          Effect.gen(function* () {
            const admin = yield* signUpSuperuser
            const user = yield* signUp("mail")
            const verifyToken = yield* outbox.token("send_verification_email", user.email)
            expect((yield* call("POST", "/verify-email/confirm", { json: { token: verifyToken } })).status).toBe(200)
            yield* call("POST", "/password-reset/request", { json: { email: user.email } })
            const resetToken = yield* outbox.token("send_password_reset_email", user.email)
            const newPassword = "reset passphrase for the audit"
            const reset = yield* call("POST", "/password-reset/confirm", {
              json: { token: resetToken, new_password: newPassword },
              headers: agent
            })
            expect(reset.status).toBe(200)

            const entries = (yield* pageOf(admin, { user_id: user.userId })).events
            expect(entries.map((entry) => entry.type)).toEqual([
              "password.reset",
              "email.verified",
              "sign_in.succeeded"
            ])
            expect(entries[0]).toMatchObject({
              actor: { kind: "user", id: user.id },
              user_agent: "audit-test/1.0",
              details: { sessions_ended: 1 }
            })
            expect(entries[1]?.details).toEqual({ email: user.email })
            const text = JSON.stringify(entries)
            for (const secret of [verifyToken, resetToken, newPassword]) expect(text).not.toContain(secret)
          })
        )

        it.effect("role and permission changes are recorded with the superuser who made them", () =>
          Effect.gen(function* () {
            const admin = yield* signUpSuperuser
            const target = yield* signUp("target")
            const post = (path: string, json: unknown) => call("POST", path, { token: admin.access, json })
            expect((yield* post("/admin/assign-role", { user_id: target.id, role: "auditor" })).status).toBe(200)
            expect((yield* post("/admin/remove-role", { user_id: target.id, role: "auditor" })).status).toBe(200)
            const role = `role-${target.userId.slice(-6)}`
            expect((yield* post("/admin/assign-permission", { role, permission: "audit:read" })).status).toBe(200)
            expect((yield* post("/admin/remove-permission", { role, permission: "audit:read" })).status).toBe(200)

            const superuser = { kind: "superuser", id: admin.id }
            const roles = (yield* pageOf(admin, { user_id: target.userId })).events
            expect(roles.slice(0, 2)).toMatchObject([
              { type: "role.removed", actor: superuser, details: { role: "auditor" } },
              { type: "role.assigned", actor: superuser, details: { role: "auditor" }, ip_address: "127.0.0.1" }
            ])
            const permissions = (yield* pageOf(admin, { limit: "20" })).events.filter(
              (entry) => entry.details.role === role
            )
            expect(permissions).toMatchObject([
              { type: "permission.removed", user_id: null, actor: superuser, details: { permission: "audit:read" } },
              { type: "permission.assigned", user_id: null, actor: superuser, details: { permission: "audit:read" } }
            ])
          })
        )

        it.effect("the log pages newest first with limit and cursor, and filters by type", () =>
          Effect.gen(function* () {
            const admin = yield* signUpSuperuser
            const user = yield* signUp("pages")
            for (let i = 0; i < 4; i++) yield* login(user.email, "wrong password again")
            expect((yield* login(user.email)).status).toBe(200)
            const all = (yield* pageOf(admin, { user_id: user.userId })).events
            expect(all.map((entry) => entry.type)).toEqual([
              "sign_in.succeeded",
              ...Array<string>(4).fill("sign_in.failed"),
              "sign_in.succeeded"
            ])
            const first = yield* pageOf(admin, { user_id: user.userId, limit: "4" })
            expect(first.events.map((entry) => entry.id)).toEqual(all.slice(0, 4).map((entry) => entry.id))
            expect(first.next_cursor).toEqual(expect.any(String))
            const second = yield* pageOf(admin, { user_id: user.userId, limit: "4", cursor: first.next_cursor ?? "" })
            expect(second.events.map((entry) => entry.id)).toEqual(all.slice(4).map((entry) => entry.id))
            expect(second.next_cursor).toBeNull()
            const failures = yield* pageOf(admin, { user_id: user.userId, type: "sign_in.failed" })
            expect(failures.events).toHaveLength(4)
            expect(failures.next_cursor).toBeNull()
          })
        )

        it.effect("only superusers read the log; bad filters answer 422, never 500", () =>
          Effect.gen(function* () {
            const admin = yield* signUpSuperuser
            const user = yield* signUp("reader")
            expectProblem(yield* audit(user, {}), 403, "AuthorizationError")
            expectProblem(yield* call("GET", "/admin/audit"), 401, "TokenError")
            for (const query of [
              { limit: "0" },
              { limit: "501" },
              { limit: "ten" },
              { limit: "secret-limit-value" },
              { cursor: "secret-cursor-value" },
              { type: "no.such.type" },
              { cursor: "-1" },
              { cursor: "1.5" },
              { user_id: "" },
              { user_id: "a\u0001b" }
            ]) {
              const reply = yield* audit(admin, query)
              expectProblem(reply, 422, "ValidationError")
              // A 422 names the field and the rule, never what was sent.
              for (const sent of Object.values(query)) {
                if (sent.length > 3) expect(JSON.stringify(reply.body)).not.toContain(sent)
              }
            }
          })
        )

        it.effect("reads record nothing: GET /me adds no entry", () =>
          Effect.gen(function* () {
            const admin = yield* signUpSuperuser
            const user = yield* signUp("reads")
            const before = yield* typesOf(admin, user.userId)
            for (let i = 0; i < 3; i++) expect((yield* me(user.access)).status).toBe(200)
            expect(yield* typesOf(admin, user.userId)).toEqual(before)
          })
        )
      }
    )
  })
}
