import { accessSync, constants, existsSync, mkdirSync, statSync } from "node:fs"
import { dirname } from "node:path"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import * as Statement from "@effect/sql/Statement"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { Cause, type ConfigError, Effect, Layer, Option } from "effect"
import * as Migrations from "./migrations.js"

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
 * @effect/sql's client of one better-sqlite3 connection (in WAL mode, SqliteClient's default),
 * made with SQLite's own answers to two things the plain client leaves out:
 * - BEGIN IMMEDIATE: a transaction takes the file's write lock as it begins (waiting for it as
 *   busy_timeout says), so that one that reads first and writes after (a sign-in holds the
 *   credential version, then starts its session) never finds at its first write that another
 *   process (a worker) wrote meanwhile: SQLite would refuse that write at once, not wait.
 * - a COMMIT that SQLite refuses (a deferred constraint, a full disk, a lock it could not get)
 *   leaves the transaction open, and the client neither rolls it back nor tells anyone: the
 *   statements of other requests would then run inside it, and the next BEGIN's failure would roll
 *   back their acknowledged writes with it. It is rolled back there, before the connection is let
 *   go, as SQLite's documentation asks.
 */
const sqliteClient = (options: SqliteClient.SqliteClientConfig) =>
  Effect.gen(function* () {
    const sqlite = yield* SqliteClient.make(options)
    // The one connection, held (by `reserve`) by one statement or one transaction at a time.
    const connection = yield* Effect.scoped(sqlite.reserve)
    const inTransaction: Connection = {
      ...connection,
      executeUnprepared: (text, params, transformRows) => {
        const ran = connection.executeUnprepared(text, params, transformRows)
        return text === "COMMIT"
          ? Effect.tapError(ran, () => Effect.ignore(connection.executeUnprepared("ROLLBACK", [], undefined)))
          : ran
      }
    }
    return yield* SqlClient.make({
      acquirer: sqlite.reserve,
      transactionAcquirer: Effect.as(sqlite.reserve, inTransaction),
      compiler: Statement.makeCompilerSqlite(),
      spanAttributes: [["db.system.name", "sqlite"]],
      beginTransaction: "BEGIN IMMEDIATE"
    })
  })

/**
 * The client of the file (or `:memory:`), refused when the file cannot be opened. What the checks
 * above cannot foresee (a folder of /proc, a file that is no database) the driver throws, and the
 * client lets it through as a defect: it becomes the same failure as theirs, so that start-up
 * tells it in a sentence rather than a stack.
 */
export const client = (filename: string) =>
  // The client keeps each prepared statement for its time to live, and a statement that could not
  // be prepared (a table missing while the file is being repaired) is kept as that failure just as
  // long: at the default ten minutes, a statement first met during an outage would fail for ten
  // minutes after it. Preparing again every few seconds costs nothing a request would notice.
  Layer.scoped(SqlClient.SqlClient, sqliteClient({ filename, prepareCacheTTL: PREPARED_STATEMENT_TTL })).pipe(
    Layer.provide(Reactivity.layer),
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
 * Turns foreign keys on, makes every commit durable, lets a new file give freed pages back, and
 * prepares the schema; answers the
 * migrations applied. WAL with synchronous=FULL syncs the log at each commit, so an acknowledged
 * write (a revocation above all) survives a power loss; NORMAL could lose the last ones.
 */
export const prepare = (options: Migrations.SchemaOptions = {}) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`PRAGMA foreign_keys = ON`
    yield* sql`PRAGMA synchronous = FULL`
    yield* sql`PRAGMA busy_timeout = 5000`
    // A new file (no table yet) is made incremental, so that the pages a sweep frees can be given
    // back (StoreSpaceSqlite). The mode is in the file's header, which the client's WAL pragma has
    // already written: it changes only with a VACUUM, instant on an empty file. An older file
    // keeps its mode until `portcullis prune --vacuum`.
    const [tables] = yield* sql<{ readonly count: number }>`SELECT COUNT(*) AS count FROM sqlite_master`
    if (tables?.count === 0) {
      yield* sql`PRAGMA auto_vacuum = INCREMENTAL`
      yield* sql`VACUUM`
    }
    return yield* Migrations.prepareSchema(options)
  })

/**
 * The embedded database, migrated before the layer is ready. Its single connection serialises
 * transactions, which is what makes refresh rotation a compare-and-swap here, and commits each
 * one with synchronous=FULL (`prepare`): an acknowledged write is on the disk.
 */
export const layer = (filename: string, options: Migrations.SchemaOptions = {}) =>
  Layer.provideMerge(Migrations.migratedBeforeUse(prepare(options)), client(filename))
