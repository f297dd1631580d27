import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { Statement } from "@effect/sql/Statement"
import { Context, Effect, Option } from "effect"

/**
 * A read-only connection of its own to the embedded database's file, for the reads of the hot
 * paths (the token's user and session on every authenticated request, a refresh's token and
 * user, a sign-in's user). @effect/sql costs a statement about a hundred steps of Effect's
 * runtime (its statement cache, the connection's semaphore, a span), several times what SQLite
 * spends answering it; here a statement is one synchronous call, as SQLite is used by hand.
 *
 * Only reads: in WAL mode a reader never waits for the writer and always sees every committed
 * write, so what the main connection has committed (a revocation above all) is what this one
 * reads. Writes stay on the main connection, whose single semaphore keeps transactions apart; a
 * second writer on the same event loop could wait for a lock the first can only release once the
 * loop is free.
 *
 * The tag alone, so that the SQL repositories can look for it without loading SQLite's driver;
 * SqliteDatabase makes it.
 */
export class SqliteReader extends Context.Tag("infrastructure/SqliteReader")<
  SqliteReader,
  {
    /** The rows of a statement built with the main connection's client (and so compiled for SQLite). */
    readonly all: (statement: Statement<unknown>) => Effect.Effect<ReadonlyArray<unknown>, SqlError>
  }
>() {}

/**
 * The rows of a read: on the reading connection where there is one, unless a transaction is open
 * on this fiber, which must read its own writes through its own connection.
 */
export const readerOf = Effect.map(
  Effect.serviceOption(SqliteReader),
  (reader) =>
    <A extends object>(statement: Statement<A>): Effect.Effect<ReadonlyArray<A>, SqlError> =>
      Option.isNone(reader)
        ? statement
        : Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) =>
            Option.isSome(transaction)
              ? statement
              : (reader.value.all(statement) as Effect.Effect<ReadonlyArray<A>, SqlError>)
          )
)
