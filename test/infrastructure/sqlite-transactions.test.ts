import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect, Either, Option } from "effect"
import { RefreshTokenRepo } from "../../application/ports/RefreshTokenRepo.js"
import { Transaction } from "../../application/ports/Transaction.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { FamilyId } from "../../domain/Session.js"
import { sqliteFileWithClient } from "../support/databases.js"
import { at, familyOf, newUser, startFamily, tokenOf } from "../support/sessionRecords.js"

/**
 * Transactions on a SQLite file that another process (a worker of the same service) writes to
 * as well, and after a COMMIT that SQLite refuses.
 */

/** Another process's connection to this database's file, closed with the test's scope. */
const otherProcess = Effect.acquireRelease(
  Effect.map(
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql<{ readonly file: string }>`SELECT file FROM pragma_database_list WHERE name = 'main'`
    ),
    ([main]) => {
      const other = new Database(main?.file ?? "")
      // Told at once that the file is busy, where a worker would wait for it.
      other.pragma("busy_timeout = 0")
      return other
    }
  ),
  (other) => Effect.sync(() => other.close())
)

/** A write of the other process: done, or refused because the file's write lock is held. */
const writeFrom = (other: Database.Database, statement: string) =>
  Effect.sync(() => Either.try(() => other.prepare(statement).run()))

describe("a SQLite file's transactions", () => {
  it.scoped(
    "one that reads first and writes after commits though another process writes in between: it holds the write lock from its start",
    () =>
      Effect.gen(function* () {
        const tx = yield* Transaction
        const users = yield* UserRepo
        const families = yield* RefreshTokenRepo
        const other = yield* otherProcess
        const user = yield* newUser("worker@example.com")
        // A sign-in's shape: the credential version held, then the session started.
        const signIn = yield* tx.transaction(
          Effect.gen(function* () {
            const held = yield* users.holdCredentials(user.id, user.credential_version)
            const meanwhile = yield* writeFrom(other, "UPDATE users SET is_verified = 1")
            yield* families.startFamily(familyOf(user.id, "family-w"), tokenOf("digest-w", "family-w"))
            return { held, otherWaited: Either.isLeft(meanwhile) }
          })
        )
        expect(signIn).toEqual({ held: true, otherWaited: true })
        expect(Option.isSome(yield* families.findByDigest("digest-w"))).toBe(true)
        // Once it has committed, the other process writes.
        expect(Either.isRight(yield* writeFrom(other, "UPDATE users SET is_verified = 1"))).toBe(true)
      }).pipe(Effect.provide(sqliteFileWithClient()))
  )

  it.scoped(
    "one that cannot have the write lock in time is an unavailable store, and the next one commits once it is free",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const tx = yield* Transaction
        const other = yield* otherProcess
        const user = yield* newUser("locked@example.com")
        yield* sql`PRAGMA busy_timeout = 20`
        other.exec("BEGIN IMMEDIATE")
        const refused = yield* Effect.flip(tx.transaction(startFamily(user.id, "family-l")))
        other.exec("ROLLBACK")
        expect(refused._tag).toBe("StoreUnavailableError")
        yield* tx.transaction(startFamily(user.id, "family-l"))
        expect(Option.isSome(yield* (yield* RefreshTokenRepo).findByDigest("digest-family-l"))).toBe(true)
      }).pipe(Effect.provide(sqliteFileWithClient()))
  )

  it.effect(
    "a write acknowledged after a refused COMMIT stays: the refused transaction was rolled back, not left open",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const tx = yield* Transaction
        const families = yield* RefreshTokenRepo
        const user = yield* newUser("refused@example.com")
        yield* startFamily(user.id, "family-r")
        // A foreign key checked at COMMIT: the one way to make SQLite refuse a COMMIT on demand.
        yield* sql`CREATE TABLE parents (id INTEGER PRIMARY KEY)`
        yield* sql`CREATE TABLE children (parent INTEGER REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED)`
        const refused = yield* Effect.flip(tx.transaction(sql`INSERT INTO children (parent) VALUES (42)`))
        expect(refused._tag).toBe("StoreUnavailableError")
        // A revocation, outside any transaction, acknowledged...
        expect(yield* families.revokeFamily(FamilyId.make("family-r"), at)).toBe(true)
        // ...and still there after the next transaction.
        yield* tx.transaction(startFamily(user.id, "family-next"))
        expect(yield* families.isEnded(FamilyId.make("family-r"))).toBe(true)
        expect(yield* sql`SELECT parent FROM children`).toEqual([])
      }).pipe(Effect.provide(sqliteFileWithClient()))
  )
})
