import type { SqlError } from "@effect/sql/SqlError"
import type Database from "better-sqlite3"
import { Effect } from "effect"
import type { ParseError } from "effect/ParseResult"
import type { StoreUnavailableError } from "../../../application/ports/StoreUnavailableError.js"
import { failingAsUnavailable } from "../failures.js"
import { attempt, type Builder, prepared, type Rows, type Values } from "./prepared.js"
import { unlessInTransaction } from "./transactions.js"

/** A read of a fast adapter's: the rows of one of a plain adapter's statements, outside @effect/sql's client. */
export type Read<V extends ReadonlyArray<unknown>> = (
  ...values: V
) => Effect.Effect<Rows, SqlError | StoreUnavailableError>

/**
 * `build`, a plain adapter's statement, prepared once on `db`, a SQLite connection that only
 * reads: each call one synchronous call of the driver. In WAL mode the connection sees every
 * transaction committed, on any connection of any process, and nothing that is not. Unbounded in
 * time, as every SQLite call is (storeTimeout.ts).
 */
export const readingOn = <B extends Builder>(db: Database.Database, build: B): Read<Values<B>> => {
  const statement = prepared(db, build)
  return (...values) => Effect.suspend(() => attempt(() => Effect.succeed(statement.all(...values))))
}

/**
 * A plain adapter's read, made by `read` (a statement of the plain adapter's on a reading SQLite
 * connection, `readingOn`, or named on PostgreSQL's pool, named.ts) and its rows read by the
 * plain adapter's `ofRows`: without the client's permit, its statement cache, its span or a
 * compilation of the statement. Inside a transaction of the client (the Transaction port), whose
 * writes only its own connection sees, the plain read instead.
 */
export const readOutsideTransactions =
  <V extends ReadonlyArray<unknown>, A>(
    plain: (...values: V) => Effect.Effect<A, StoreUnavailableError>,
    read: Read<V>,
    ofRows: (rows: Rows) => Effect.Effect<A, SqlError | ParseError>
  ) =>
  (...values: V): Effect.Effect<A, StoreUnavailableError> =>
    unlessInTransaction(plain(...values), () => failingAsUnavailable(Effect.flatMap(read(...values), ofRows)))
