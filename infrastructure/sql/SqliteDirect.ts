import type { Connection } from "@effect/sql/SqlConnection"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, type Effect } from "effect"
import type { Execute } from "./execute.js"

/**
 * Connections of their own to the embedded database's file, used as SQLite is used by hand: a
 * statement is one synchronous better-sqlite3 call. @effect/sql costs a statement about a hundred
 * steps of Effect's runtime (its statement cache, the connection's semaphore, a span) and a
 * transaction about two hundred more, several times what SQLite spends answering them; the hot
 * paths (the token's user and session on every authenticated request, a refresh's token, user
 * and rotation, a sign-in's user, session and audit entry) go here instead.
 *
 * Reads from outside a transaction go to a connection that only reads: in WAL mode a reader never
 * waits for a writer and sees every committed write and nothing else, so what any connection has
 * committed (a revocation above all) is what it reads, and what is not committed yet (or may yet
 * be rolled back) it does not see. Transactions go to a second connection, and share their COMMIT
 * (groupCommit.ts): each is answered only once that COMMIT has returned and the log it wrote has
 * been synced to the disk, a sync that runs off the event loop. A group first takes the
 * main connection (`reserve`), as a transaction of its own would: while it is open, no transaction
 * is open there, so neither connection ever waits for a lock that the other could only release
 * once the event loop is free. Inside it, the client itself runs its statements here (the
 * transaction's connection, as @effect/sql knows it), so that any statement of the work, written
 * for the client or not, is part of the transaction.
 *
 * The tag alone, so that the SQL repositories can look for it without loading SQLite's driver;
 * SqliteDatabase makes it.
 */
export class SqliteDirect extends Context.Tag("infrastructure/SqliteDirect")<
  SqliteDirect,
  {
    /**
     * The rows of a statement built with the main connection's client (and so compiled for
     * SQLite), for a fiber outside any transaction: as of the last commit, on the reading connection.
     */
    readonly read: Execute
    /** The rows of a statement, run here: for the work of this connection's transaction. */
    readonly execute: Execute
    /** This connection as @effect/sql sees it inside a transaction here. */
    readonly connection: Connection
    /**
     * `effect` as one transaction on this connection, for a fiber that has none open: a savepoint
     * of the next group to run here, answered once that group has committed.
     */
    readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SqlError, R>
    /** `effect` as a savepoint of the transaction this fiber has open here. */
    readonly savepoint: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SqlError, R>
  }
>() {}
