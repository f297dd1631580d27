import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Option } from "effect"
import { AuditLog } from "../../application/ports/AuditLog.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { PRUNE_START } from "../../domain/Retention.js"
import { Email, UserId } from "../../domain/User.js"
import { databases } from "../support/databases.js"
import { auditEntry as entry } from "../support/sessionRecords.js"

const alice = UserId.make("alice-id")
const bob = UserId.make("bob-id")

for (const backend of databases) {
  const run = <A, E>(effect: Effect.Effect<A, E, AuditLog | UserRepo>) =>
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

    it.effect("listSince: entries from a time on, oldest first, a page at a time after an id", () =>
      run(
        Effect.gen(function* () {
          const log = yield* AuditLog
          // Written out of time order: a later id may carry an earlier time (two workers' clocks).
          for (const at of [1_000, 5_000, 4_000, 6_000, 2_000, 7_000]) {
            yield* log.append(entry("session.revoked", alice, at, { at }))
          }
          const since = DateTime.unsafeMake(4_000)
          const first = yield* log.listSince(since, 0, 2)
          expect(first.map((record) => record.details.at)).toEqual([5_000, 4_000])
          const second = yield* log.listSince(since, first[1]?.id ?? 0, 2)
          expect(second.map((record) => record.details.at)).toEqual([6_000, 7_000])
          expect(second.every((record) => record.id > (first[1]?.id ?? 0))).toBe(true)
          expect(yield* log.listSince(since, second[1]?.id ?? 0, 2)).toEqual([])
          expect((yield* log.listSince(DateTime.unsafeMake(8_000), 0, 10)).length).toBe(0)
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

    it.effect(
      "deleteBefore deletes at most a batch of the entries older than the cutoff, oldest first, from where the last reached",
      () =>
        run(
          Effect.gen(function* () {
            const log = yield* AuditLog
            const cutoff = DateTime.unsafeMake(2_000)
            for (const time of [1_700, 1_000, 1_500, 2_000, 3_000])
              yield* log.append(entry("account.locked", null, time))
            expect(yield* log.countBefore(cutoff)).toBe(3)
            const first = yield* log.deleteBefore(cutoff, 2, PRUNE_START)
            expect(first).toEqual({ found: 2, done: 2, reached: 1_500 })
            expect(yield* log.countBefore(cutoff)).toBe(1)
            // Nothing before `from` is taken.
            expect(yield* log.deleteBefore(cutoff, 2, 1_800)).toEqual({ found: 0, done: 0, reached: 1_800 })
            expect(yield* log.deleteBefore(cutoff, 2, first.reached)).toEqual({ found: 1, done: 1, reached: 1_700 })
            expect(
              (yield* log.list({ limit: 10 })).map((record) => DateTime.toEpochMillis(record.occurred_at))
            ).toEqual([3_000, 2_000])
            expect(yield* log.deleteBefore(cutoff, 2, 1_700)).toEqual({ found: 0, done: 0, reached: 1_700 })
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
  })
}
