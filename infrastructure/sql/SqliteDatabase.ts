import { accessSync, constants, existsSync, mkdirSync, statSync } from "node:fs"
import { dirname } from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import Database from "better-sqlite3"
import { Cause, type ConfigError, Effect, Layer, Option } from "effect"
import * as Migrations from "./migrations.js"
import { SqliteReader } from "./SqliteReader.js"

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

/** The reading connection to `filename`, which the main connection has created and migrated. */
const reader = (filename: string) =>
  Layer.scoped(
    SqliteReader,
    Effect.gen(function* () {
      const db = yield* Effect.acquireRelease(
        Effect.try({
          try: () => {
            const db = new Database(filename, { readonly: true, fileMustExist: true })
            // As long as the main connection waits: a lock held elsewhere (another process's
            // recovery of the log) is waited for rather than refused at once.
            db.pragma("busy_timeout = 5000")
            return db
          },
          catch: (cause) => new SqlError({ cause, message: "the reading connection cannot open it" })
        }),
        (db) => Effect.sync(() => db.close())
      )
      // A handful of statements ever go through here: each is prepared once.
      const prepared = new Map<string, Database.Statement>()
      const statementOf = (text: string) => {
        const known = prepared.get(text)
        if (known !== undefined) return known
        const made = db.prepare(text)
        prepared.set(text, made)
        return made
      }
      return SqliteReader.of({
        all: (statement) =>
          Effect.try({
            try: () => {
              const [text, params] = statement.compile()
              return statementOf(text).all(...params)
            },
            catch: (cause) => new SqlError({ cause, message: "Failed to execute statement" })
          })
      })
    })
  )

/**
 * The embedded database, migrated before the layer is ready. Its single connection serialises
 * transactions, which is what makes refresh rotation a compare-and-swap here. A file also gets a
 * reading connection (SqliteReader) for the hot read; `:memory:` cannot, since another connection
 * to it would be another database.
 */
export const layer = (filename: string, options: Migrations.SchemaOptions = {}) => {
  const migrated = Layer.provideMerge(Migrations.migratedBeforeUse(prepare(options)), client(filename))
  return filename === ":memory:" ? migrated : Layer.provideMerge(reader(filename), migrated)
}
