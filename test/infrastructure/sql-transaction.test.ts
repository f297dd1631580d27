import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { transaction, unavailable } from "../../infrastructure/sql/failures.js"
import * as SqliteDatabase from "../../infrastructure/sql/SqliteDatabase.js"
import { quiet } from "../support/databases.js"

// A deferred foreign key is checked at COMMIT: the one way to make a COMMIT fail on demand, as
// it fails when the connection drops under it.
const failingCommit = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE parents (id INTEGER PRIMARY KEY)`
  yield* sql`CREATE TABLE children (id INTEGER PRIMARY KEY,
    parent INTEGER REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED)`
  return sql
})

describe("a database transaction whose COMMIT fails", () => {
  it.effect("fails as an unavailable store (503), not as a defect (500)", () =>
    Effect.gen(function* () {
      const sql = yield* failingCommit
      const exit = yield* Effect.exit(
        unavailable(transaction(sql)(sql`INSERT INTO children (id, parent) VALUES (1, 42)`))
      )
      expect(exit).toStrictEqual(Exit.fail(expect.objectContaining({ _tag: "StoreUnavailableError" })))
    }).pipe(Effect.provide(SqliteDatabase.layer(":memory:").pipe(Layer.provide(quiet))))
  )

  it.effect("is a defect with @effect/sql's own withTransaction, which is why `transaction` exists", () =>
    Effect.gen(function* () {
      const sql = yield* failingCommit
      const exit = yield* Effect.exit(
        unavailable(sql.withTransaction(sql`INSERT INTO children (id, parent) VALUES (1, 42)`))
      )
      expect(Exit.isFailure(exit) && exit.cause._tag).toBe("Die")
    }).pipe(Effect.provide(SqliteDatabase.layer(":memory:").pipe(Layer.provide(quiet))))
  )
})
