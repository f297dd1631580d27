import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, FiberRef } from "effect"
import type Pg from "pg"
import { type Execute, executeOn, statementSpan } from "./execute.js"

/**
 * Reads from outside a transaction on PostgreSQL, run on the client's own pool as node-postgres
 * is used by hand: a connection taken, the statement's text and values sent, the connection given
 * back. Through @effect/sql a statement costs the event loop about twice what node-postgres
 * itself spends on it (its acquirer, a span, the connection's cancel and error handlers made
 * anew; BENCHMARKS.md), and the hot reads (the token's user and session on every authenticated
 * request, a refresh's token, a sign-in's user) go here instead, and so do the statements of a
 * transaction the client has open (a refresh's rotation), on its connection. The pool, the
 * compiled text and the type parsers are the client's, so what a read answers is what the client
 * would answer.
 *
 * A read whose fiber is interrupted (the store timeout, a client gone) is given up as the client
 * gives one up: the server is asked to cancel it, and the connection goes back to the pool once
 * the statement has ended. Where the tracer is on, each read is the client's `sql.execute` span.
 *
 * The tag alone, so that the SQL repositories can look for it without loading node-postgres;
 * PgDatabase makes it.
 */
export class PgDirect extends Context.Tag("infrastructure/PgDirect")<
  PgDirect,
  {
    /** The rows of a statement built with the client (and so compiled for PostgreSQL), for a fiber outside any transaction. */
    readonly read: Execute
    /** The statements of a transaction the client has open on `connection`, sent straight to it. */
    readonly onConnection: (connection: Connection) => Execute
  }
>() {}

const failure = (cause: unknown, message: string) => new SqlError({ cause, message })

/**
 * Whether the connection is still of use after `error`: only when the server refused the statement
 * (severity ERROR). FATAL and PANIC end the session (a terminated backend says FATAL before it
 * closes), and an error of the client's own is the connection failing.
 */
const brokenBy = (error: Error) => ("severity" in error && error.severity === "ERROR" ? undefined : error)

/** The rows of `text` with `values`, on a connection of `pool` taken for it alone. */
const query = (pool: Pg.Pool, text: string, values: ReadonlyArray<unknown>) =>
  Effect.async<ReadonlyArray<unknown>, SqlError>((resume) => {
    let abandoned = false
    // node-postgres sets it once connected, and declares it nowhere (the client reads it too).
    let running: (Pg.PoolClient & { readonly processID?: number }) | undefined
    pool.connect((error, client, release) => {
      // The pool answers an error or a connection; "no error" may come as undefined or as null.
      if (error || client === undefined) {
        resume(Effect.fail(failure(error, "Failed to acquire connection")))
        return
      }
      if (abandoned) {
        release()
        return
      }
      running = client
      // A connection that dies under the statement says so as an event as well as to the
      // statement, and a client taken from the pool has no one else listening for it.
      let died: Error | undefined
      const dying = (error: Error) => {
        died = error
      }
      client.on("error", dying)
      client.query(text, values as Array<unknown>, (error, result) => {
        running = undefined
        client.off("error", dying)
        release(died ?? (error === null || error === undefined ? undefined : brokenBy(error)))
        if (abandoned) return
        if (error !== null && error !== undefined) resume(Effect.fail(failure(error, "Failed to execute statement")))
        else resume(Effect.succeed(result.rows))
      })
    })
    return Effect.sync(() => {
      abandoned = true
      const pid = running?.processID
      // Best effort and not waited for, as the client's own: the statement's callback gives its
      // connection back when the server has ended it.
      if (pid !== undefined && !pool.ending) pool.query("SELECT pg_cancel_backend($1)", [pid], () => {})
    })
  })

/** Reads on `pool`, and a transaction's statements; under a tracer that is on when it is built, each in the client's span. */
export const make = (pool: Pg.Pool, attributes: Readonly<Record<string, unknown>>) =>
  Effect.map(FiberRef.get(FiberRef.currentTracerEnabled), (traced) => {
    const span = statementSpan(traced, attributes)
    const read: Execute = (statement) =>
      Effect.suspend(() => {
        const [text, values] = statement.compile()
        // The rows are what the statement's text selects, which its type states.
        return span(text, query(pool, text, values) as Effect.Effect<ReadonlyArray<never>, SqlError>)
      })
    return PgDirect.of({ read, onConnection: executeOn(span) })
  })
