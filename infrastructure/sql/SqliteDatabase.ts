import { accessSync, constants, existsSync, mkdirSync, statSync } from "node:fs"
import { dirname } from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import type { Statement } from "@effect/sql/Statement"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import Database from "better-sqlite3"
import { Cause, type ConfigError, Effect, Exit, Layer, Option, Stream } from "effect"
import * as GroupCommit from "./groupCommit.js"
import * as LogSync from "./logSync.js"
import * as Migrations from "./migrations.js"
import { SqliteDirect } from "./SqliteDirect.js"

/**
 * Why the file cannot be the database, if it cannot: the driver would only say "unable to open
 * database file", and as a defect. The file's own folder is created (`./data` of the default),
 * never a tree of them: a path naming folders that do not exist is more likely a mistake.
 */
const unusable = (filename: string): string | undefined => {
  const folder = dirname(filename)
  if (!existsSync(folder)) {
    if (!existsSync(dirname(folder))) return `its folder ${folder} does not exist, nor does the one above it`
    try {
      mkdirSync(folder)
    } catch (error) {
      // Another process starting beside this one may have just made it.
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") return `its folder ${folder} cannot be created`
    }
  }
  if (!statSync(folder).isDirectory()) return `${folder} is not a folder`
  if (existsSync(filename) && statSync(filename).isDirectory()) return `${filename} is a folder`
  try {
    accessSync(existsSync(filename) ? filename : folder, constants.R_OK | constants.W_OK)
  } catch {
    return `${existsSync(filename) ? filename : folder} is not writable by this process`
  }
  return undefined
}

/** How long a statement stays prepared, or refused, before it is prepared again. */
export const PREPARED_STATEMENT_TTL = "5 seconds"

/**
 * One better-sqlite3 connection in WAL mode (the client's default), refused when the file cannot be opened.
 * What the checks above cannot foresee (a folder of /proc, a file that is no database) the driver
 * throws, and the client lets it through as a defect: it becomes the same failure as theirs, so
 * that start-up tells it in a sentence rather than a stack.
 */
export const client = (filename: string) =>
  // The client keeps each prepared statement for its time to live, and a statement that could not
  // be prepared (a table missing while the file is being repaired) is kept as that failure just as
  // long: at the default ten minutes, a statement first met during an outage would fail for ten
  // minutes after it. Preparing again every few seconds costs nothing a request would notice.
  SqliteClient.layer({ filename, prepareCacheTTL: PREPARED_STATEMENT_TTL }).pipe(
    Layer.catchAllCause((cause) =>
      Layer.failCause<ConfigError.ConfigError | SqlError>(
        Option.match(Cause.dieOption(cause), {
          onNone: () => cause,
          onSome: (defect) => Cause.fail(new SqlError({ cause: defect, message: "the driver cannot open it" }))
        })
      )
    ),
    Layer.provide(
      Layer.effectDiscard(
        Effect.suspend(() => {
          const reason = filename === ":memory:" ? undefined : unusable(filename)
          return reason === undefined ? Effect.void : Effect.fail(new SqlError({ message: reason }))
        })
      )
    )
  )

/**
 * Turns foreign keys on, makes every commit durable and prepares the schema; answers the
 * migrations applied. WAL with synchronous=FULL syncs the log at each commit, so an acknowledged
 * write (a revocation above all) survives a power loss; NORMAL could lose the last ones.
 */
export const prepare = (options: Migrations.SchemaOptions = {}) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`PRAGMA foreign_keys = ON`
    yield* sql`PRAGMA synchronous = FULL`
    yield* sql`PRAGMA busy_timeout = 5000`
    return yield* Migrations.prepareSchema(options)
  })

/** A connection of better-sqlite3 to `filename`, as durable and as patient as the main one unless `configure` says otherwise. */
const connect = (filename: string, purpose: string, configure: (db: Database.Database) => void = () => {}) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        const db = new Database(filename, { fileMustExist: true })
        db.pragma("foreign_keys = ON")
        db.pragma("synchronous = FULL")
        // As long as the main connection waits: a lock held elsewhere (another process's
        // write or recovery of the log) is waited for rather than refused at once.
        db.pragma("busy_timeout = 5000")
        configure(db)
        return db
      },
      catch: (cause) => new SqlError({ cause, message: `the ${purpose} connection cannot open it` })
    }),
    (db) => Effect.sync(() => db.close())
  )

/**
 * A connection's statements, each prepared once. The client's statements run here inside a
 * transaction too, and some are built anew for their values (a list of roles): past a few
 * hundred texts the cache starts again rather than grow without bound.
 */
const preparedOn = (db: Database.Database) => {
  const prepared = new Map<string, Database.Statement>()
  return (text: string) => {
    const known = prepared.get(text)
    if (known !== undefined) return known
    if (prepared.size >= 256) prepared.clear()
    const made = db.prepare(text)
    prepared.set(text, made)
    return made
  }
}

const rowsOf = (statement: Database.Statement, params: ReadonlyArray<unknown>): ReadonlyArray<unknown> => {
  if (statement.reader) return statement.all(...params)
  statement.run(...params)
  return []
}

/** What `work` answers, or the SqlError it throws, as an effect already decided: for use inside a suspend. */
const outcome = <A>(work: () => A): Effect.Effect<A, SqlError> => {
  try {
    return Effect.succeed(work())
  } catch (cause) {
    return Effect.fail(new SqlError({ cause, message: "Failed to execute statement" }))
  }
}

/**
 * The rows of a statement built with the client (and so compiled for SQLite), on the connection
 * whose statements `statementOf` prepares. The rows are what the statement's text selects, which
 * its type states.
 */
const rowsOfStatement =
  (statementOf: (text: string) => Database.Statement) =>
  <A extends object>(statement: Statement<A>) =>
  () => {
    const [text, params] = statement.compile()
    return rowsOf(statementOf(text), params) as ReadonlyArray<A>
  }

/**
 * The direct connections to `filename`, which the main connection has created and migrated.
 *
 * The transactions' connection writes its commits to the log without syncing it (synchronous=
 * NORMAL), and each group's COMMIT is followed by `syncLog` on the log file, before any member is
 * answered: as durable as FULL's sync inside the COMMIT, but the sync (half a millisecond to
 * several on a loaded disk, where nothing else could run) waits on another thread, and the
 * event loop serves other requests meanwhile, the next group's among them (logSync.ts shares
 * one sync among the groups that committed while another was under way). What a COMMIT made
 * visible is visible before it is synced: a request answered with it is answered after a later
 * sync, which covers every earlier frame of the file.
 */
const direct = (filename: string, syncLog: LogSync.SyncLog) =>
  Layer.scoped(
    SqliteDirect,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const db = yield* connect(filename, "direct", (opened) => opened.pragma("synchronous = NORMAL"))
      const sync = yield* syncLog(`${filename}-wal`)
      const synced = Effect.tryPromise({
        try: sync,
        catch: (cause) => new SqlError({ cause, message: "the database's log could not be synced to the disk" })
      })
      // Reads from outside a transaction go to a connection of their own, which only reads: in WAL
      // mode it sees every commit and nothing else, never the open group's writes, nor waits for them.
      const reader = yield* connect(filename, "reading", (opened) => opened.pragma("query_only = ON"))
      const statementOf = preparedOn(db)
      const attempt = <A>(work: () => A) => Effect.suspend(() => outcome(work))
      const run = (text: string, params: ReadonlyArray<unknown> = []) =>
        attempt(() => rowsOf(statementOf(text), params))
      const rowsTransformed = (
        rows: Effect.Effect<ReadonlyArray<unknown>, SqlError>,
        transformRows: (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
      ) => (transformRows === undefined ? rows : Effect.map(rows, (found) => transformRows(found as Array<object>)))
      const connection: Connection = {
        execute: (text, params, transformRows) => rowsTransformed(run(text, params), transformRows),
        executeUnprepared: (text, params, transformRows) =>
          rowsTransformed(
            attempt(() => rowsOf(db.prepare(text), params)),
            transformRows
          ),
        executeRaw: (text, params) =>
          attempt(() => {
            const statement = statementOf(text)
            return statement.reader ? statement.all(...params) : statement.run(...params)
          }),
        executeValues: (text, params) =>
          attempt(() => {
            const statement = statementOf(text)
            if (!statement.reader) {
              statement.run(...params)
              return []
            }
            try {
              return statement.raw(true).all(...params) as Array<Array<unknown>>
            } finally {
              statement.raw(false)
            }
          }),
        executeStream: () => Stream.dieMessage("the direct connection does not stream")
      }
      // As @effect/sql marks a fiber inside a transaction: its connection, and no savepoint yet.
      const inside = [connection, 0] as const

      const end = (text: string) => Effect.ignore(run(text))
      const rollbackToSavepoint = Effect.zipRight(end("ROLLBACK TO direct"), end("RELEASE direct"))

      /** `effect` as a savepoint of the transaction open here, rolled back when it fails (or its release does). */
      const savepoint = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
        Effect.uninterruptibleMask((restore) =>
          Effect.zipRight(
            run("SAVEPOINT direct"),
            Effect.flatMap(
              Effect.exit(restore(effect)),
              (exit): Effect.Effect<A, E | SqlError> =>
                Exit.isSuccess(exit)
                  ? Effect.as(
                      Effect.tapError(run("RELEASE direct"), () => rollbackToSavepoint),
                      exit.value
                    )
                  : Effect.zipRight(rollbackToSavepoint, exit)
            )
          )
        )
      const log = yield* LogSync.make(synced)
      // A group's transaction first takes the main connection (`reserve`), as one of its own would.
      const groups = yield* GroupCommit.make({
        begin: Effect.zipRight(sql.reserve, run("BEGIN IMMEDIATE")),
        commit: Effect.asVoid(run("COMMIT")),
        durable: log.durable,
        rollback: end("ROLLBACK"),
        member: savepoint,
        isOpen: () => db.inTransaction
      })
      const readRows = rowsOfStatement(preparedOn(reader))
      const executeRows = rowsOfStatement(statementOf)
      // A hot read is one suspend and its answer: two steps of the runtime, not four.
      return SqliteDirect.of({
        read: (statement) =>
          Effect.suspend(() => {
            const lost = log.lost()
            return lost === undefined ? outcome(readRows(statement)) : Effect.failCause(lost)
          }),
        execute: (statement) => attempt(executeRows(statement)),
        connection,
        transaction: (effect) =>
          groups.transaction(Effect.provideService(effect, SqlClient.TransactionConnection, inside)),
        savepoint
      })
    })
  )

/**
 * The embedded database, migrated before the layer is ready. Its single connection serialises
 * transactions, which is what makes refresh rotation a compare-and-swap here. A file also gets
 * direct connections (SqliteDirect): one that reads, for the hot reads, and one for the rotation and
 * a sign-in's writes, whose transactions take the main connection first and share their commits
 * (each group's log synced off the event loop by `syncLog`);
 * `:memory:` cannot, since another connection to it would be another database.
 */
export const layer = (
  filename: string,
  options: Migrations.SchemaOptions = {},
  syncLog: LogSync.SyncLog = LogSync.keptDescriptor
) => {
  const migrated = Layer.provideMerge(Migrations.migratedBeforeUse(prepare(options)), client(filename))
  return filename === ":memory:" ? migrated : Layer.provideMerge(direct(filename, syncLog), migrated)
}
