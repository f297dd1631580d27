import * as PgClient from "@effect/sql-pg/PgClient"
import { Duration, Layer, type Redacted } from "effect"
import * as Migrations from "./migrations.js"

/** Connections per process; with WORKERS=N the database sees up to N times as many. */
export const POOL_SIZE = 10

/**
 * The client over a node-postgres pool for a `postgres://` URL (its query string may set
 * `sslmode`, or `options=-c search_path=<schema>` to keep Portcullis in a schema of its own). The
 * client tries a first connection before the layer is ready, within the connect timeout, so that
 * an unreachable database stops start-up instead of failing the first requests.
 */
export const client = (url: Redacted.Redacted<string>, options: { readonly maxConnections?: number } = {}) =>
  PgClient.layer({
    url,
    connectTimeout: Duration.seconds(5),
    idleTimeout: Duration.seconds(30),
    maxConnections: options.maxConnections ?? POOL_SIZE,
    applicationName: "portcullis"
  })

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
