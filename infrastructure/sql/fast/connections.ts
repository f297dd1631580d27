import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import Database from "better-sqlite3"
import { Effect, Option, type Scope } from "effect"
import type { ParseError } from "effect/ParseResult"
import type { StoreUnavailableError } from "../../../application/ports/StoreUnavailableError.js"
import { unavailable } from "../failures.js"

/** How a fast adapter opens the file: to read only, or to write with durable commits. */
export type Access = "reading" | "writing"

/** A connection to a file the client has made and migrated, on the client's terms (its waits, and FULL sync for writes). */
export const open = (filename: string, access: Access): Database.Database => {
  const db = new Database(filename, { readonly: access === "reading", fileMustExist: true })
  // A lock held elsewhere (another process's write, the log being recovered) is waited for as the client waits.
  db.pragma("busy_timeout = 5000")
  if (access === "writing") {
    db.pragma("synchronous = FULL")
    db.pragma("foreign_keys = ON")
  }
  return db
}

/** A connection of a fast adapter's own, closed with its layer's scope. */
export const connection = (filename: string, access: Access): Effect.Effect<Database.Database, SqlError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.try({
      try: () => open(filename, access),
      catch: (cause) => new SqlError({ cause, message: `the ${access} connection cannot open it` })
    }),
    (opened) => Effect.sync(() => opened.close())
  )

/**
 * `commit`, a synchronous transaction on the adapter's own writing connection, made while the
 * client's connection (its permit) is held so that no transaction of this process is open beside
 * it, bounded and failing as the client's calls do; inside a transaction of the client (the
 * Transaction port), `plain` instead, which runs in it.
 */
export const outsideTransaction = <A>(
  sql: SqlClient.SqlClient,
  plain: Effect.Effect<A, StoreUnavailableError>,
  commit: () => Effect.Effect<A, SqlError | ParseError>
): Effect.Effect<A, StoreUnavailableError> =>
  Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (open) =>
    Option.isSome(open) ? plain : unavailable(Effect.scoped(Effect.zipRight(sql.reserve, Effect.suspend(commit))))
  )
