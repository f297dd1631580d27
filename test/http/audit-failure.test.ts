import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { Accounts } from "../../application/Accounts.js"
import { AuditLog } from "../../application/ports/AuditLog.js"
import { RoleRepo } from "../../application/ports/RoleRepo.js"
import { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import { Email } from "../../domain/User.js"
import * as AuditLogSql from "../../infrastructure/sql/AuditLogSql.js"
import * as RoleRepoSql from "../../infrastructure/sql/RoleRepoSql.js"
import { call, expectProblem, login, me, password, signIn, signUp, uniqueEmail } from "../support/flows.js"
import * as TestApp from "../support/TestApp.js"

const unavailable = Effect.fail(new StoreUnavailableError({ store: "database" }))

/**
 * The store's own log, whose writes all fail while `outage.on`: the log's table refusing rows. A
 * use case's transaction (Transaction) then fails with its entry's append and leaves nothing of
 * the change behind, whichever came first.
 */
const flakyLog = (outage: { on: boolean }) =>
  Layer.effect(
    AuditLog,
    Effect.map(AuditLogSql.make, (log) =>
      AuditLog.of({
        ...log,
        append: (entry) => (outage.on ? unavailable : log.append(entry))
      })
    )
  )

/** Role grants whose permission writes fail while `outage.on`, after the use case appended their entry. */
const flakyGrants = (outage: { on: boolean }) =>
  Layer.effect(
    RoleRepo,
    Effect.map(RoleRepoSql.make, (roles) =>
      RoleRepo.of({
        ...roles,
        assignPermission: (role, permission) => (outage.on ? unavailable : roles.assignPermission(role, permission))
      })
    )
  )

const superuser = Effect.gen(function* () {
  const email = uniqueEmail("root")
  yield* Effect.flatMap(Accounts, (accounts) => accounts.createSuperuser(Email.make(email), Redacted.make(password)))
  return yield* signIn(email)
})

describe("when the audit log cannot record what protects", () => {
  const outage = { on: false }
  layer(TestApp.layer("memory:", {}, { overrides: flakyLog(outage) }), { excludeTestServices: true })((it) => {
    it.effect("the action stands: logout ends the session, and a failed sign-in is still a plain 401", () =>
      Effect.gen(function* () {
        const user = yield* signUp("protected")
        const other = yield* signIn(user.email)
        outage.on = true
        expect((yield* call("POST", "/sessions/revoke-others", { token: user.access })).status).toBe(200)
        expectProblem(yield* me(other.access), 401, "TokenBlacklistedError")
        expect((yield* call("POST", "/logout", { token: user.access })).status).toBe(204)
        expectProblem(yield* me(user.access), 401, "TokenBlacklistedError")
        expectProblem(yield* login(user.email, "wrong password"), 401, "AuthenticationError")
      }).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            outage.on = false
          })
        )
      )
    )
  })
})

describe("when the audit log cannot record what grants", () => {
  const outage = { on: false }
  layer(TestApp.layer("memory:", {}, { overrides: flakyLog(outage) }), { excludeTestServices: true })((it) => {
    it.effect("nothing is granted unrecorded: a role assignment and a sign-in answer 503 and change nothing", () =>
      Effect.gen(function* () {
        const admin = yield* superuser
        const user = yield* signUp("granted")
        outage.on = true
        const assigned = yield* call("POST", "/admin/assign-role", {
          token: admin.access,
          json: { user_id: user.id, role: "auditor" }
        })
        expectProblem(assigned, 503, "ServiceUnavailableError")
        expectProblem(yield* login(user.email), 503, "ServiceUnavailableError")
        outage.on = false
        expect(((yield* me(user.access)).body as { roles: Array<string> }).roles).toEqual([])
      }).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            outage.on = false
          })
        )
      )
    )
  })
})

for (const backend of TestApp.backends) {
  describe(`when a grant's own write fails after its entry (${backend.name})`, () => {
    const outage = { on: false }
    layer(TestApp.layer(backend, {}, { overrides: flakyGrants(outage) }), { excludeTestServices: true })((it) => {
      it.effect("the entry is undone with it: the log records no grant that did not happen", () =>
        Effect.gen(function* () {
          const admin = yield* superuser
          outage.on = true
          const granted = yield* call("POST", "/admin/assign-permission", {
            token: admin.access,
            json: { role: "auditor", permission: "audit:read" }
          })
          expectProblem(granted, 503, "ServiceUnavailableError")
          outage.on = false
          const log = yield* call("GET", "/admin/audit?type=permission.assigned", { token: admin.access })
          expect(log.status).toBe(200)
          expect((log.body as { events: Array<unknown> }).events).toEqual([])
        }).pipe(
          Effect.ensuring(
            Effect.sync(() => {
              outage.on = false
            })
          )
        )
      )
    })
  })
}
