import type { SqlClient } from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"
import type { ParseError } from "effect/ParseResult"
import { storeUnavailable } from "../../application/metrics.js"
import type { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import { bounded } from "../storeTimeout.js"

/** True when the database refused a row for breaking a unique constraint (SQLite or PostgreSQL). */
export const isUniqueViolation = (error: SqlError): boolean => {
  const code = (error.cause as { readonly code?: unknown } | undefined)?.code
  return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY" || code === "23505"
}

/** True when the database refused a row whose reference is gone (a user deleted meanwhile). */
export const isForeignKeyViolation = (error: SqlError): boolean => {
  const code = (error.cause as { readonly code?: unknown } | undefined)?.code
  return code === "SQLITE_CONSTRAINT_FOREIGNKEY" || code === "23503"
}

/** A database call bounded in time (StoreTimeout): past it, an unavailable store. */
export const boundedCall = bounded("database")

/**
 * A database call whose failures are logged with their cause for the operator and answered to
 * the request as an unavailable store (503), never as a crash. Not bounded in time: for a call
 * that bounds itself (fast/named.ts).
 */
export const failingAsUnavailable = <A, R>(
  effect: Effect.Effect<A, SqlError | ParseError | StoreUnavailableError, R>
): Effect.Effect<A, StoreUnavailableError, R> =>
  Effect.catchAll(effect, (error) =>
    error._tag === "StoreUnavailableError"
      ? Effect.fail(error)
      : Effect.logError("database operation failed", error).pipe(Effect.zipRight(storeUnavailable("database")))
  )

/** A database call bounded in time (StoreTimeout) and failing as `failingAsUnavailable` says. */
export const unavailable = <A, R>(
  effect: Effect.Effect<A, SqlError | ParseError, R>
): Effect.Effect<A, StoreUnavailableError, R> => boundedCall(failingAsUnavailable(effect))

/**
 * `sql.withTransaction`, where a COMMIT or ROLLBACK that fails (the connection dropped under
 * it) fails as the SqlError it is: @effect/sql makes it a defect, which would reach the client
 * as a 500 instead of the 503 of an unavailable store.
 */
export const transaction =
  (sql: SqlClient) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
    sql
      .withTransaction(effect)
      .pipe(
        Effect.catchSomeDefect((defect) =>
          defect instanceof SqlError ? Option.some(Effect.fail(defect)) : Option.none()
        )
      )
