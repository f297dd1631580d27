import { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Context, Duration, Effect, Layer, Redacted } from "effect"
import pg from "pg"
import * as Migrations from "./migrations.js"

/** Connections per process; with WORKERS=N the database sees up to N times as many. */
export const POOL_SIZE = 10

const connectTimeout = Duration.seconds(5)

/**
 * The node-postgres pool under the client: the client runs every statement on it, and the fast
 * adapters (fast/named.ts) run their named statements on it, so the database sees one pool a process.
 */
export class PgPool extends Context.Tag("infrastructure/sql/PgPool")<PgPool, pg.Pool>() {}

export interface PoolOptions {
  readonly maxConnections?: number
}

/**
 * The pool for a `postgres://` URL (its query string may set `sslmode`, or `options=-c
 * search_path=<schema>` to keep Portcullis in a schema of its own), built as @effect/sql-pg
 * builds its own. A first connection is tried before the layer is ready, within the connect
 * timeout, so that an unreachable database stops start-up instead of failing the first requests.
 */
export const pool = (url: Redacted.Redacted<string>, options: PoolOptions = {}) =>
  Layer.scoped(
    PgPool,
    Effect.acquireRelease(
      Effect.gen(function* () {
        const made = new pg.Pool({
          connectionString: Redacted.value(url),
          connectionTimeoutMillis: Duration.toMillis(connectTimeout),
          idleTimeoutMillis: Duration.toMillis(Duration.seconds(30)),
          max: options.maxConnections ?? POOL_SIZE,
          application_name: "portcullis"
        })
        // A connection that fails while idle is dropped by the pool; the next statement opens another.
        made.on("error", () => {})
        yield* Effect.tryPromise({
          try: () => made.query("SELECT 1"),
          catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
        }).pipe(
          Effect.timeoutFail({
            duration: connectTimeout,
            onTimeout: () =>
              new SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
          }),
          Effect.tapError(() => Effect.promise(() => made.end().catch(() => undefined)))
        )
        return made
      }),
      (opened) => Effect.promise(() => opened.end().catch(() => undefined)).pipe(Effect.timeoutOption(1000))
    )
  )

/** The client over the pool of `url`, and the pool itself (for the fast adapters). */
export const client = (url: Redacted.Redacted<string>, options: PoolOptions = {}) =>
  Layer.flatMap(pool(url, options), (context) =>
    Layer.merge(
      Layer.succeedContext(context),
      PgClient.layerFromPool({ acquire: Effect.succeed(Context.get(context, PgPool)) })
    )
  )

/**
 * Applies every pending migration and the deployment's indexes; answers the migrations applied.
 * The migrator locks its table for the transaction, so workers starting together apply each
 * migration once.
 */
export const prepare = Migrations.prepareSchema

/** The PostgreSQL database, migrated before the layer is ready. */
export const layer = (url: Redacted.Redacted<string>, options: PoolOptions & Migrations.SchemaOptions = {}) =>
  Layer.provideMerge(Migrations.migratedBeforeUse(prepare(options)), client(url, options))
