import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { Effect, Layer } from "effect"
import * as Migrations from "./migrations.js"

/** One better-sqlite3 connection in WAL mode (the client's default); the folder of the file is created if missing. */
export const client = (filename: string) =>
  SqliteClient.layer({ filename }).pipe(
    Layer.provide(
      Layer.effectDiscard(
        Effect.sync(() => {
          if (filename !== ":memory:") mkdirSync(dirname(filename), { recursive: true })
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
 * transactions, which is what makes refresh rotation a compare-and-swap here.
 */
export const layer = (filename: string, options: Migrations.SchemaOptions = {}) =>
  Layer.provideMerge(Migrations.migratedBeforeUse(prepare(options)), client(filename))
