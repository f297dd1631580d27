import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Context, Duration, Effect, Layer, Redacted } from "effect"
import Pg from "pg"
import * as Migrations from "./migrations.js"
import * as PgDirect from "./PgDirect.js"

/** Connections per process; with WORKERS=N the database sees up to N times as many. */
export const POOL_SIZE = 10

const CONNECT_TIMEOUT = Duration.seconds(5)

/**
 * The client's pool, made here so that the hot reads (PgDirect) share it: the options @effect/sql-pg
 * would give its own, and the same first connection before the layer is ready, so that an
 * unreachable database stops start-up within the connect timeout.
 */
const pool = (url: Redacted.Redacted<string>, maxConnections: number) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const made = new Pg.Pool({
        connectionString: Redacted.value(url),
        connectionTimeoutMillis: Duration.toMillis(CONNECT_TIMEOUT),
        idleTimeoutMillis: Duration.toMillis(Duration.seconds(30)),
        max: maxConnections,
        application_name: "portcullis"
      })
      // A connection that fails while idle is dropped by the pool; the error is not the process's.
      made.on("error", () => {})
      return made
    }),
    (made) => Effect.promise(() => made.end()).pipe(Effect.interruptible, Effect.timeoutOption(Duration.seconds(1)))
  ).pipe(
    Effect.tap((made) =>
      Effect.tryPromise({
        try: () => made.query("SELECT 1"),
        catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
      }).pipe(
        Effect.timeoutFail({
          duration: CONNECT_TIMEOUT,
          onTimeout: () =>
            new SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
        })
      )
    )
  )

/**
 * A node-postgres pool for a `postgres://` URL (its query string may set `sslmode`, or
 * `options=-c search_path=<schema>` to keep Portcullis in a schema of its own): the client over
 * it, and the direct reads on it.
 */
export const client = (url: Redacted.Redacted<string>, options: { readonly maxConnections?: number } = {}) =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const shared = yield* pool(url, options.maxConnections ?? POOL_SIZE)
      const sql = yield* PgClient.fromPool({ acquire: Effect.succeed(shared), applicationName: "portcullis" })
      const direct = yield* PgDirect.make(shared, { "db.system.name": "postgresql" })
      return Context.make(PgClient.PgClient, sql).pipe(
        Context.add(SqlClient.SqlClient, sql),
        Context.add(PgDirect.PgDirect, direct)
      )
    })
  ).pipe(Layer.provide(Reactivity.layer))

/**
 * Applies every pending migration and the deployment's indexes; answers the migrations applied.
 * The migrator locks its table for the transaction, so workers starting together apply each
 * migration once.
 */
export const prepare = Migrations.prepareSchema

/** The PostgreSQL database, migrated before the layer is ready. */
export const layer = (
  url: Redacted.Redacted<string>,
  options: { readonly maxConnections?: number } & Migrations.SchemaOptions = {}
) => Layer.provideMerge(Migrations.migratedBeforeUse(prepare(options)), client(url, options))
