import { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect } from "effect"
import pg from "pg"
import type { StoreUnavailableError } from "../../../application/ports/StoreUnavailableError.js"
import { StoreTimeout, timedOut } from "../../storeTimeout.js"
import { type Builder, compiled, type Rows, type Values } from "./prepared.js"

/**
 * A statement of a plain adapter's, compiled once for PostgreSQL and run on the pool as a named
 * statement: node-postgres parses it once on each connection and then sends only its name and
 * values. One callback of the driver a call, where the client spends an Effect on each (its span,
 * its compilation, a fiber to bound it in time).
 *
 * The call is bounded by the StoreTimeout of the fiber that runs it, with one timer of Node's
 * over the whole call (the wait for a connection and the statement), the same bound as the
 * client's calls have, so that a frozen database answers 503 in time:
 * - Timed out before a connection came, the statement is never sent: the connection goes back
 *   to the pool as soon as it comes.
 * - Timed out while the statement runs, or interrupted then, the statement is left to end on its
 *   own connection, which goes back to the pool when it has (a frozen connection stays out until
 *   the database answers or the connection breaks, as the client's would).
 * - A connection that breaks under the statement fails it (a SqlError) and is dropped by the pool.
 *
 * `name` must be unique among the process's named statements: a connection keeps each name's text.
 */
export const named = <B extends Builder>(pool: pg.Pool, name: string, build: B) => {
  const { text, bound } = compiled(build)
  return (...values: Values<B>): Effect.Effect<Rows, SqlError | StoreUnavailableError> =>
    Effect.flatMap(StoreTimeout, (timeout) => {
      const limit = Duration.isFinite(timeout) ? Duration.toMillis(timeout) : undefined
      return Effect.async<Rows, SqlError | StoreUnavailableError>((resume) => {
        let settled = false
        const settle = (outcome: Effect.Effect<Rows, SqlError | StoreUnavailableError>) => {
          if (settled) return
          settled = true
          clearTimeout(timer)
          resume(outcome)
        }
        const timer = limit === undefined ? undefined : setTimeout(() => settle(timedOut("database", timeout)), limit)
        pool.connect((cause, client, release) => {
          if (cause !== undefined || client === undefined) {
            settle(Effect.fail(new SqlError({ cause, message: "Failed to acquire connection" })))
            return
          }
          if (settled) {
            release()
            return
          }
          // A connection that breaks while it is out of the pool tells it by an event, not only
          // by the statement's callback; unheard, the event would end the process.
          const broken = (error: Error) => {
            settle(Effect.fail(new SqlError({ cause: error, message: "Connection error" })))
          }
          client.once("error", broken)
          client.query({ name, text, values: bound(values) }, (error, result) => {
            client.removeListener("error", broken)
            release(leavesConnectionSound(error) ? undefined : error)
            settle(
              error
                ? Effect.fail(new SqlError({ cause: error, message: "Failed to execute statement" }))
                : Effect.succeed(result.rows)
            )
          })
        })
        // Interrupted: the answer is no longer awaited; what was started ends on its own.
        return Effect.sync(() => {
          settled = true
          clearTimeout(timer)
        })
      })
    })
}

/**
 * A statement's own failure (a constraint, a division by zero) leaves its connection sound. The
 * server ending the session says so with an error of its own before it closes the socket (class
 * 57P: terminated, shutting down; class 08: the connection), and the close may come after the
 * connection is back in the pool, in time for the next call to be sent on it: those errors, and
 * any that is not the server's, drop the connection.
 */
const leavesConnectionSound = (error: Error | undefined) =>
  error === undefined || (error instanceof pg.DatabaseError && !/^(57P|08)/.test(error.code ?? ""))
