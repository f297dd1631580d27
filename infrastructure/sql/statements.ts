import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { Statement } from "@effect/sql/Statement"
import { Effect, Option } from "effect"
import { type Execute, openTransaction, throughClient } from "./execute.js"
import { transaction } from "./failures.js"
import { PgDirect } from "./PgDirect.js"
import { SqliteDirect } from "./SqliteDirect.js"

/**
 * Where a repository's statements run: the database's direct path where it has one (SqliteDirect's
 * connections, PgDirect's pool), else the client; a read of a fiber with a transaction open goes
 * to that transaction's connection, which alone sees its writes.
 */

/**
 * The rows of a read: on the direct path, unless a transaction is open on this fiber: then on the
 * direct connection for a transaction open there, else through the client.
 */
export const readerOf = Effect.map(
  Effect.all([Effect.serviceOption(SqliteDirect), Effect.serviceOption(PgDirect)]),
  ([sqlite, pg]): Execute => {
    if (Option.isSome(sqlite)) {
      const direct = sqlite.value
      return (statement) =>
        Effect.flatMap(openTransaction, (open) =>
          Option.isNone(open)
            ? direct.read(statement)
            : open.value[0] === direct.connection
              ? direct.execute(statement)
              : statement
        )
    }
    if (Option.isSome(pg)) {
      const direct = pg.value
      return (statement) =>
        Effect.flatMap(openTransaction, (open) => (Option.isNone(open) ? direct.read(statement) : statement))
    }
    return throughClient
  }
)

/**
 * A transaction whose statements `body` runs with the `Execute` it is given: on the direct
 * connection where there is one (a savepoint of the transaction this fiber has open there, if
 * any), else (PostgreSQL, SQLite in memory, or inside a transaction open on the main connection)
 * as the client's transaction. On PostgreSQL (PgDirect) its statements go straight to the
 * connection the client opened it on: what the client would do with them, less its steps at each
 * (and its hooks: SQLite in memory, where nothing is hot, keeps them for the tests that watch
 * the client's statements). Written once, the same statements either way; any other statement
 * of the work, written for the client, joins the transaction through the client.
 */
export const transactionOf = (sql: SqlClient.SqlClient) =>
  Effect.map(Effect.all([Effect.serviceOption(SqliteDirect), Effect.serviceOption(PgDirect)]), ([direct, pg]) => {
    const throughClientTransaction = <A, E, R>(body: (execute: Execute) => Effect.Effect<A, E, R>) =>
      Option.isNone(pg)
        ? transaction(sql)(body(throughClient))
        : transaction(sql)(
            Effect.flatMap(openTransaction, (open) =>
              body(Option.isSome(open) ? pg.value.onConnection(open.value[0]) : throughClient)
            )
          )
    return <A, E, R>(body: (execute: Execute) => Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
      Option.isNone(direct)
        ? throughClientTransaction(body)
        : Effect.flatMap(openTransaction, (open) =>
            Option.isNone(open)
              ? direct.value.transaction(body(direct.value.execute))
              : open.value[0] === direct.value.connection
                ? direct.value.savepoint(body(direct.value.execute))
                : throughClientTransaction(body)
          )
  })

/**
 * A statement of a hot path compiled once: `build` is compiled with a marker for each of its
 * values, and each call binds its own values to the text that gave, in the places the markers
 * took (whatever order the text holds them in). Building and compiling the same text again on
 * every request, as a template does, costs a few microseconds each time; so does the prepared
 * statement's lookup by a text that is a new string each time.
 */
export const compiledOnce = <A extends object, V extends ReadonlyArray<string>>(
  sql: SqlClient.SqlClient,
  arity: V["length"],
  build: (...values: V) => Statement<A>
): ((...values: V) => Statement<A>) => {
  const markers = Array.from({ length: arity }, (_, index) => `\u0000compiledOnce:${index}`)
  const [text, params] = build(...(markers as unknown as V)).compile()
  const places = params.map((param) => markers.indexOf(param as string))
  if (places.length !== arity || places.some((place) => place < 0)) {
    throw new Error("compiledOnce: every value must be bound as a parameter exactly once")
  }
  return (...values) =>
    sql.unsafe<A>(
      text,
      places.map((place) => values[place])
    )
}
