import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Deferred, Effect, Either, Exit, Fiber, Option } from "effect"
import { AuditLog } from "../../application/ports/AuditLog.js"
import { RefreshTokenRepo } from "../../application/ports/RefreshTokenRepo.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { FamilyId } from "../../domain/Session.js"
import type { Execute } from "../../infrastructure/sql/execute.js"
import { SqliteDirect } from "../../infrastructure/sql/SqliteDirect.js"
import { transactionOf } from "../../infrastructure/sql/statements.js"
import { sqliteFile, sqliteFileWithClient } from "../support/databases.js"
import { at, auditEntry, clientStatements, newUser, startFamily, tokenOf } from "../support/sessionRecords.js"

/**
 * The direct connection of a SQLite file: the hot reads and the refresh rotation go there, outside
 * the client, and see every commit; inside a transaction they stay on the transaction's
 * connection, which alone sees the transaction's own writes. Its transactions wait for the main
 * connection's, and a failure rolls them back.
 */

describe("the direct connection of a SQLite file", () => {
  it.effect("answers a user by id and by login, and a refresh token, outside the client, up to the last commit", () =>
    Effect.gen(function* () {
      const users = yield* UserRepo
      const families = yield* RefreshTokenRepo
      const user = yield* newUser("reader@example.com")
      yield* startFamily(user.id, "family-1")
      const read = yield* clientStatements(
        Effect.all([
          users.findById(user.id),
          users.findByLogin("email", "reader@example.com"),
          families.findByDigest("digest-family-1")
        ])
      )
      expect(read.statements).toEqual([])
      const [byId, byLogin, byDigest] = read.value
      expect([Option.isSome(byId), Option.isSome(byLogin), Option.isSome(byDigest)]).toEqual([true, true, true])
      yield* families.revokeFamily(FamilyId.make("family-1"), at)
      const found = yield* families.findByDigest("digest-family-1")
      expect(Option.map(found, ({ family }) => Option.isSome(family.revoked_at))).toEqual(Option.some(true))
    }).pipe(Effect.provide(sqliteFile.repositories()))
  )

  it.effect("stays off inside a transaction, which reads its own writes before they are committed", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const users = yield* UserRepo
      const inside = yield* sql.withTransaction(
        Effect.gen(function* () {
          const user = yield* newUser("inside@example.com")
          return yield* clientStatements(users.findById(user.id))
        })
      )
      expect(Option.isSome(inside.value)).toBe(true)
      expect(inside.statements).toHaveLength(1)
    }).pipe(Effect.provide(sqliteFileWithClient()))
  )

  const rotation = (from: string, to: string) =>
    Effect.flatMap(RefreshTokenRepo, (families) =>
      families.rotate({
        presented: from,
        successor: tokenOf(to, "family-r"),
        sealedSuccessor: Option.some("sealed"),
        now: at,
        client: { ip_address: "192.0.2.7", user_agent: "direct" }
      })
    )

  it.effect("rotates a refresh token outside the client, once, and the rotation is committed", () =>
    Effect.gen(function* () {
      const families = yield* RefreshTokenRepo
      const user = yield* newUser("rotate@example.com")
      yield* startFamily(user.id, "family-r")
      const first = yield* clientStatements(rotation("digest-family-r", "digest-2"))
      expect(first).toEqual({ value: true, statements: [] })
      expect(yield* rotation("digest-family-r", "digest-3")).toBe(false)
      const spent = yield* families.findByDigest("digest-family-r")
      const successor = yield* families.findByDigest("digest-2")
      expect(Option.map(spent, ({ token }) => [Option.isSome(token.rotated_at), token.sealed_successor])).toEqual(
        Option.some([true, Option.some("sealed")])
      )
      expect(Option.map(successor, ({ family }) => [family.ip_address, family.user_agent])).toEqual(
        Option.some(["192.0.2.7", "direct"])
      )
      expect(Option.isNone(yield* families.findByDigest("digest-3"))).toBe(true)
    }).pipe(Effect.provide(sqliteFile.repositories()))
  )

  it.effect("rotates on the main connection inside a transaction already open there, as part of it", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const direct = Option.getOrThrow(yield* Effect.serviceOption(SqliteDirect))
      const user = yield* newUser("rotate-inside@example.com")
      yield* startFamily(user.id, "family-r")
      const successor = sql<{ readonly digest: string }>`SELECT digest FROM refresh_tokens WHERE digest = 'digest-2'`
      const inside = yield* sql.withTransaction(
        Effect.gen(function* () {
          const rotated = yield* rotation("digest-family-r", "digest-2")
          // The transaction sees its successor; the direct connections, before its commit, do not.
          return { rotated, here: (yield* successor).length, elsewhere: (yield* direct.read(successor)).length }
        })
      )
      expect(inside).toEqual({ rotated: true, here: 1, elsewhere: 0 })
      expect((yield* direct.read(successor)).length).toBe(1)
    }).pipe(Effect.provide(sqliteFileWithClient()))
  )

  it.live("waits for a transaction open on the main connection, then commits after it", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const user = yield* newUser("rotate-wait@example.com")
      yield* startFamily(user.id, "family-r")
      const opened = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const order: Array<string> = []
      const holder = yield* Effect.fork(
        sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`UPDATE users SET is_verified = 1 WHERE id = ${user.id}`
            yield* Deferred.succeed(opened, undefined)
            yield* Deferred.await(release)
            order.push("main committed")
          })
        )
      )
      yield* Deferred.await(opened)
      const rotating = yield* Effect.fork(
        Effect.tap(rotation("digest-family-r", "digest-2"), () => order.push("rotated"))
      )
      yield* Effect.sleep("100 millis")
      expect(order).toEqual([])
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      expect(yield* Fiber.join(rotating)).toBe(true)
      expect(order).toEqual(["main committed", "rotated"])
    }).pipe(Effect.provide(sqliteFileWithClient()))
  )

  it.effect("rolls its transaction back when the work in it fails", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const direct = Option.getOrThrow(yield* Effect.serviceOption(SqliteDirect))
      const user = yield* newUser("rollback@example.com")
      const failed = yield* Effect.exit(
        direct.transaction(
          Effect.zipRight(
            direct.execute(sql`UPDATE users SET is_verified = 1 WHERE id = ${user.id}`),
            Effect.fail("the work failed" as const)
          )
        )
      )
      expect(Exit.isFailure(failed)).toBe(true)
      const rows = yield* sql<{ readonly is_verified: number }>`SELECT is_verified FROM users WHERE id = ${user.id}`
      expect(rows).toEqual([{ is_verified: 0 }])
      // The connection is usable again: the failed transaction did not stay open.
      yield* direct.transaction(direct.execute(sql`UPDATE users SET is_verified = 1 WHERE id = ${user.id}`))
      expect(yield* sql`SELECT is_verified FROM users WHERE id = ${user.id}`).toEqual([{ is_verified: 1 }])
    }).pipe(Effect.provide(sqliteFileWithClient()))
  )

  it.effect("fails a statement SQLite refuses with a SqlError, in a read and in a transaction, never a defect", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const direct = Option.getOrThrow(yield* Effect.serviceOption(SqliteDirect))
      const refused = sql`SELECT * FROM no_such_table`
      // A defect would not be flipped: it would fail the test as it is.
      const read = yield* Effect.flip(direct.read(refused))
      const inside = yield* Effect.flip(direct.transaction(direct.execute(refused)))
      expect([read._tag, inside._tag]).toEqual(["SqlError", "SqlError"])
      // The failed transaction was rolled back: the connection takes the next one.
      expect(yield* direct.transaction(direct.execute(sql`SELECT 1 AS one`))).toEqual([{ one: 1 }])
    }).pipe(Effect.provide(sqliteFileWithClient()))
  )

  it.effect("answers an unavailable store when the rotation cannot run, and lets go of the main connection", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const user = yield* newUser("broken@example.com")
      yield* startFamily(user.id, "family-r")
      yield* sql`ALTER TABLE refresh_tokens RENAME TO refresh_tokens_away`
      const failed = yield* Effect.flip(rotation("digest-family-r", "digest-2"))
      expect(failed._tag).toBe("StoreUnavailableError")
      // Neither the main connection nor the direct one is left holding a transaction.
      yield* sql`ALTER TABLE refresh_tokens_away RENAME TO refresh_tokens`
      expect(yield* rotation("digest-family-r", "digest-2")).toBe(true)
    }).pipe(Effect.provide(sqliteFileWithClient()))
  )

  it.effect("starts a session and records its sign-in in one transaction outside the client", () =>
    Effect.gen(function* () {
      const log = yield* AuditLog
      const families = yield* RefreshTokenRepo
      const user = yield* newUser("sign-in@example.com")
      const entry = auditEntry("sign_in.succeeded", user.id, DateTime.toEpochMillis(at), { family_id: "family-s" })
      const signIn = yield* clientStatements(
        log.appendWith(startFamily(user.id, "family-s"), () => Effect.succeed(entry))
      )
      expect(signIn.statements).toEqual([])
      expect(Option.isSome(yield* families.findByDigest("digest-family-s"))).toBe(true)
      expect((yield* log.list({ user_id: user.id, limit: 10 })).map(({ type }) => type)).toEqual(["sign_in.succeeded"])
    }).pipe(Effect.provide(sqliteFile.repositories()))
  )

  it.effect("runs the client's statements of its work on itself: they commit with it and are undone with it", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const direct = Option.getOrThrow(yield* Effect.serviceOption(SqliteDirect))
      const user = yield* newUser("client-inside@example.com")
      const verify = sql`UPDATE users SET is_verified = 1 WHERE id = ${user.id}`
      const verified = sql<{ readonly is_verified: number }>`SELECT is_verified FROM users WHERE id = ${user.id}`
      const failed = yield* Effect.exit(
        direct.transaction(Effect.zipRight(verify, Effect.fail("the work failed" as const)))
      )
      expect(Exit.isFailure(failed)).toBe(true)
      expect(yield* verified).toEqual([{ is_verified: 0 }])
      // Inside, the client reads the transaction's own write, through this connection.
      expect(yield* direct.transaction(Effect.zipRight(verify, verified))).toEqual([{ is_verified: 1 }])
      expect(yield* verified).toEqual([{ is_verified: 1 }])
    }).pipe(Effect.provide(sqliteFileWithClient()))
  )

  it.live(
    "keeps its open transaction from the reads of other requests: they see the last commit at once, never what is undone",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const users = yield* UserRepo
        const direct = Option.getOrThrow(yield* Effect.serviceOption(SqliteDirect))
        const user = yield* newUser("isolated@example.com")
        const opened = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const writer = yield* Effect.fork(
          direct.transaction(
            Effect.gen(function* () {
              yield* direct.execute(sql`UPDATE users SET is_verified = 1 WHERE id = ${user.id}`)
              yield* Deferred.succeed(opened, undefined)
              yield* Deferred.await(release)
              return yield* Effect.fail("undone" as const)
            })
          )
        )
        yield* Deferred.await(opened)
        const during = yield* users.findById(user.id)
        expect(Option.map(during, ({ is_verified }) => is_verified)).toEqual(Option.some(false))
        yield* Deferred.succeed(release, undefined)
        expect(Exit.isFailure(yield* Fiber.await(writer))).toBe(true)
        const after = yield* users.findById(user.id)
        expect(Option.map(after, ({ is_verified }) => is_verified)).toEqual(Option.some(false))
      }).pipe(Effect.provide(sqliteFileWithClient()))
  )

  it.effect("nests a transaction as a savepoint: its failure undoes its own writes and no others", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const direct = Option.getOrThrow(yield* Effect.serviceOption(SqliteDirect))
      const inTransaction = yield* transactionOf(sql)
      const user = yield* newUser("nested@example.com")
      const set = (flag: "is_verified" | "is_superuser") => (execute: Execute) =>
        execute(sql`UPDATE users SET ${sql(flag)} = 1 WHERE id = ${user.id}`)
      const inner = yield* direct.transaction(
        Effect.zipRight(
          set("is_verified")(direct.execute),
          Effect.either(inTransaction((execute) => Effect.zipRight(set("is_superuser")(execute), Effect.fail("no"))))
        )
      )
      expect(inner).toEqual(Either.left("no"))
      expect(yield* sql`SELECT is_verified, is_superuser FROM users WHERE id = ${user.id}`).toEqual([
        { is_verified: 1, is_superuser: 0 }
      ])
    }).pipe(Effect.provide(sqliteFileWithClient()))
  )
})
