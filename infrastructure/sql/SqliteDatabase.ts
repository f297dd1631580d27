import { accessSync, constants, existsSync, mkdirSync, statSync } from "node:fs"
import { dirname } from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
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

/**
 * The embedded database, migrated before the layer is ready. Its single connection serialises
 * transactions, which is what makes refresh rotation a compare-and-swap here, and commits each
 * one with synchronous=FULL (`prepare`): an acknowledged write is on the disk.
 */
export const layer = (filename: string, options: Migrations.SchemaOptions = {}) =>
  Layer.provideMerge(Migrations.migratedBeforeUse(prepare(options)), client(filename))
