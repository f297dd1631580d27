import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Option, Schema } from "effect"
import { AuditLog } from "../../application/ports/AuditLog.js"
import { RoleRepo } from "../../application/ports/RoleRepo.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { PermissionName } from "../../domain/Access.js"
import type { AuditEntry } from "../../domain/Audit.js"
import { Email, RoleName, UserId } from "../../domain/User.js"
import { databases } from "../support/databases.js"
import { auditEntry as entry } from "../support/sessionRecords.js"

const alice = UserId.make("alice-id")
const bob = UserId.make("bob-id")

const role = Schema.decodeSync(RoleName)("auditors")
const permission = Schema.decodeSync(PermissionName)("audit:read")

for (const backend of databases) {
  const run = <A, E>(effect: Effect.Effect<A, E, AuditLog | UserRepo | RoleRepo>) =>
    effect.pipe(Effect.provide(backend.repositories()))

  describe.skipIf(backend.skip)(`AuditLog contract (${backend.name})`, () => {
    it.effect("answers what was appended, newest first, every field as written", () =>
      run(
        Effect.gen(function* () {
          const log = yield* AuditLog
          yield* log.append(entry("sign_in.succeeded", alice, 1_000, { method: "password", family_id: "f1" }))
          yield* log.append(entry("sign_in.failed", null, 2_000, { identifier: "nobody@example.com", attempts: 2 }))
          const [newest, oldest] = yield* log.list({ limit: 10 })
          expect(newest).toEqual({
            id: expect.any(Number),
            ...entry("sign_in.failed", null, 2_000, { identifier: "nobody@example.com", attempts: 2 })
          })
          expect(oldest).toEqual({
            id: expect.any(Number),
            ...entry("sign_in.succeeded", alice, 1_000, { method: "password", family_id: "f1" })
          })
          expect((newest?.id ?? 0) > (oldest?.id ?? 0)).toBe(true)
        })
      )
    )

    it.effect("filters by user and by type, and pages with limit and the id before which to read", () =>
      run(
        Effect.gen(function* () {
          const log = yield* AuditLog
          for (let i = 0; i < 5; i++) yield* log.append(entry("session.revoked", alice, i, { n: i }))
          yield* log.append(entry("session.revoked", bob, 10))
          yield* log.append(entry("password.changed", alice, 11))
          const revokedOfAlice = yield* log.list({ user_id: alice, type: "session.revoked", limit: 10 })
          expect(revokedOfAlice.map((record) => record.details.n)).toEqual([4, 3, 2, 1, 0])
          expect((yield* log.list({ user_id: bob, limit: 10 })).map((record) => record.type)).toEqual([
            "session.revoked"
          ])
          expect((yield* log.list({ type: "password.changed", limit: 10 })).map((record) => record.user_id)).toEqual([
            alice
          ])
          const first = yield* log.list({ user_id: alice, type: "session.revoked", limit: 2 })
          expect(first.map((record) => record.details.n)).toEqual([4, 3])
          const next = yield* log.list({ user_id: alice, type: "session.revoked", limit: 2, before: first[1]?.id })
          expect(next.map((record) => record.details.n)).toEqual([2, 1])
        })
      )
    )

    it.effect("deleteBefore deletes only the entries older than the cutoff, and answers how many", () =>
      run(
        Effect.gen(function* () {
          const log = yield* AuditLog
          yield* log.append(entry("account.locked", null, 1_000))
          yield* log.append(entry("account.locked", null, 2_000))
          yield* log.append(entry("account.locked", null, 3_000))
          expect(yield* log.deleteBefore(DateTime.unsafeMake(2_000))).toBe(1)
          expect((yield* log.list({ limit: 10 })).map((record) => DateTime.toEpochMillis(record.occurred_at))).toEqual([
            3_000, 2_000
          ])
          expect(yield* log.deleteBefore(DateTime.unsafeMake(2_000))).toBe(0)
        })
      )
    )

    it.effect("entries outlive the user they are about", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const log = yield* AuditLog
          const user = yield* users.create({
            email: Email.make("gone@example.com"),
            hashed_password: Option.none(),
            is_active: true,
            is_verified: false,
            is_superuser: false
          })
          yield* log.append(entry("account.deleted", user.id, 1_000))
          yield* users.delete(user.id)
          expect((yield* log.list({ user_id: user.id, limit: 10 })).map((record) => record.type)).toEqual([
            "account.deleted"
          ])
        })
      )
    )

    it.effect("appendWith commits the action and its entry; an entry answering null records nothing", () =>
      run(
        Effect.gen(function* () {
          const log = yield* AuditLog
          const roles = yield* RoleRepo
          const answer = yield* log.appendWith(Effect.as(roles.assignPermission(role, permission), "done"), (result) =>
            Effect.succeed(entry("permission.assigned", null, 1_000, { result }))
          )
          expect(answer).toBe("done")
          expect(yield* roles.permissionsOf(role)).toEqual([permission])
          expect((yield* log.list({ limit: 10 })).map((record) => record.details)).toEqual([{ result: "done" }])
          yield* log.appendWith(roles.removePermission(role, permission), () => Effect.succeed(null))
          expect(yield* roles.permissionsOf(role)).toEqual([])
          expect(yield* log.list({ limit: 10 })).toHaveLength(1)
        })
      )
    )

    it.effect("appendWith leaves neither the action nor the entry when the action fails", () =>
      run(
        Effect.gen(function* () {
          const log = yield* AuditLog
          const failed = yield* log
            .appendWith(Effect.fail("refused" as const), () => Effect.succeed(entry("role.assigned", alice, 1)))
            .pipe(Effect.flip)
          expect(failed).toBe("refused")
          expect(yield* log.list({ limit: 10 })).toEqual([])
        })
      )
    )

    it.effect.skipIf(backend.name === "memory")(
      "appendWith undoes the action when its entry cannot be written (one transaction)",
      () =>
        run(
          Effect.gen(function* () {
            const log = yield* AuditLog
            const roles = yield* RoleRepo
            // A NULL event type breaks the table's NOT NULL: the store refuses the entry.
            const unwritable = { ...entry("permission.assigned", null, 1), type: null } as unknown as AuditEntry
            const failure = yield* log
              .appendWith(roles.assignPermission(role, permission), () => Effect.succeed(unwritable))
              .pipe(Effect.flip)
            expect(failure._tag).toBe("StoreUnavailableError")
            expect(yield* roles.permissionsOf(role)).toEqual([])
            expect(yield* log.list({ limit: 10 })).toEqual([])
          })
        )
    )
  })
}
