import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer, Logger, LogLevel } from "effect"
import {
  type FastAdapters,
  memoryRepositories,
  postgresFastAdapters,
  sqliteFileAdapters,
  sqlRepositories
} from "../../composition/stores.js"
import * as SqliteDatabase from "../../infrastructure/sql/SqliteDatabase.js"
import type { UserRepoOptions } from "../../infrastructure/users.js"
import * as Postgres from "./postgres.js"

export const quiet = Logger.minimumLogLevel(LogLevel.Warning)

type Repositories = Layer.Layer.Success<ReturnType<typeof memoryRepositories>>

/** A database the contract suites run against. */
export interface Database {
  readonly name: string
  /** Skipped when the database it needs is not configured. */
  readonly skip: boolean
  /** The repositories over a fresh, empty database of this kind, one per call. */
  readonly repositories: (options?: UserRepoOptions) => Layer.Layer<Repositories, unknown>
}

/** The SQLite repositories over one migrated `:memory:` database, which stays reachable for checks. */
export const sqliteWithClient = (options: UserRepoOptions = {}) =>
  sqlRepositories(options).pipe(Layer.provideMerge(SqliteDatabase.layer(":memory:", options)), Layer.provide(quiet))

/**
 * The SQLite repositories over a migrated file of their own (removed after), its client reachable
 * for checks; the plain adapters, or those `files` makes for the file.
 */
export const sqliteFileWithClient = (options: UserRepoOptions = {}, files?: (filename: string) => FastAdapters) =>
  Layer.unwrapScoped(
    Effect.map(
      Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "portcullis-sqlite-"))),
        (folder) => Effect.sync(() => rmSync(folder, { recursive: true, force: true }))
      ),
      (folder) => {
        const filename = join(folder, "portcullis.db")
        return sqlRepositories(options, files?.(filename)).pipe(
          Layer.provideMerge(SqliteDatabase.layer(filename, options)),
          Layer.provide(quiet)
        )
      }
    )
  )

/** A SQLite database in a file of its own (WAL, synchronous=FULL), as `serve` opens one. */
export const sqliteFile: Database = { name: "sqlite file", skip: false, repositories: sqliteFileWithClient }

/**
 * A SQLite file as `serve` opens one, with its fast adapters (infrastructure/sql/fast/): TokenHolders
 * read and refresh tokens rotated on connections of their own, held by their ports' contract
 * suites like the plain adapters.
 */
export const sqliteFileFast: Database = {
  name: "sqlite file, fast adapters",
  skip: false,
  repositories: (options = {}) => sqliteFileWithClient(options, sqliteFileAdapters)
}

/** PostgreSQL in a schema of its own, when TEST_DATABASE_URL is set. */
export const postgresql: Database = {
  name: "postgresql",
  skip: Postgres.noPostgres,
  repositories: (options = {}) => sqlRepositories(options).pipe(Layer.provideMerge(Postgres.layer(options)))
}

/**
 * PostgreSQL as `serve` opens it, with its fast adapters (infrastructure/sql/fast/): TokenHolders
 * read and refresh tokens rotated by named statements on the client's pool, held by their ports'
 * contract suites like the plain adapters.
 */
export const postgresqlFast: Database = {
  name: "postgresql, fast adapters",
  skip: Postgres.noPostgres,
  repositories: (options = {}) =>
    sqlRepositories(options, postgresFastAdapters).pipe(Layer.provideMerge(Postgres.layer(options)))
}

/**
 * Memory, SQLite in a file, and PostgreSQL (each in a schema of its own) when TEST_DATABASE_URL is
 * set. The memory store is SQLite in memory (`memoryRepositories`): a separate `:memory:` entry
 * would run each suite a second time on the same adapters and engine.
 */
export const databases: ReadonlyArray<Database> = [
  { name: "memory", skip: false, repositories: memoryRepositories },
  sqliteFile,
  postgresql
]
