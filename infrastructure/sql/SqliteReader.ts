import type { SqlError } from "@effect/sql/SqlError"
import type { Statement } from "@effect/sql/Statement"
import { Context, type Effect } from "effect"

/**
 * A read-only connection of its own to the embedded database's file, for the read every
 * authenticated request makes. @effect/sql costs a statement about a hundred steps of Effect's
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
