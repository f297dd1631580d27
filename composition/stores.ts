import type { MigrationError } from "@effect/sql/Migrator"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { type ConfigError, Effect, Layer } from "effect"
import type { AuthorizationCodes } from "../application/ports/AuthorizationCodes.js"
import type { OidcClients } from "../application/ports/OidcClients.js"
import type { OidcGrants } from "../application/ports/OidcGrants.js"
import type { RefreshTokenRepo } from "../application/ports/RefreshTokenRepo.js"
import type { StoreSpace } from "../application/ports/StoreSpace.js"
import type { TokenHolders } from "../application/ports/TokenHolders.js"
import type { UserRepo } from "../application/ports/UserRepo.js"
import type { DatabaseUrl } from "../config/sections/storage.js"
import * as StoreSpaceNone from "../infrastructure/memory/StoreSpaceNone.js"
import * as AddressChangesSql from "../infrastructure/sql/AddressChangesSql.js"
import * as AuditLogSql from "../infrastructure/sql/AuditLogSql.js"
import * as AuthorizationCodesSql from "../infrastructure/sql/AuthorizationCodesSql.js"
import * as ConsentsSql from "../infrastructure/sql/ConsentsSql.js"
import * as EmailSignInRequestsSql from "../infrastructure/sql/EmailSignInRequestsSql.js"
import type { SchemaOptions } from "../infrastructure/sql/migrations.js"
import * as OAuthAccountRepoSql from "../infrastructure/sql/OAuthAccountRepoSql.js"
import * as OidcClientsSql from "../infrastructure/sql/OidcClientsSql.js"
import * as OidcGrantsSql from "../infrastructure/sql/OidcGrantsSql.js"
import * as OidcResourcesSql from "../infrastructure/sql/OidcResourcesSql.js"
import * as OutboxSql from "../infrastructure/sql/OutboxSql.js"
import * as ParkedRequestsSql from "../infrastructure/sql/ParkedRequestsSql.js"
import * as PasskeyRepoSql from "../infrastructure/sql/PasskeyRepoSql.js"
import type { PgPool } from "../infrastructure/sql/PgDatabase.js"
import * as RefreshTokenRepoSql from "../infrastructure/sql/RefreshTokenRepoSql.js"
import * as RoleRepoSql from "../infrastructure/sql/RoleRepoSql.js"
import * as TokenHoldersSql from "../infrastructure/sql/TokenHoldersSql.js"
import * as TransactionSql from "../infrastructure/sql/TransactionSql.js"
import * as UserRepoSql from "../infrastructure/sql/UserRepoSql.js"
import * as WebhookEndpointRepoSql from "../infrastructure/sql/WebhookEndpointRepoSql.js"
import type { UserRepoOptions } from "../infrastructure/users.js"
import { imported } from "./imported.js"

/**
 * A SQL database: its repositories over its migrated connection, and its migration on a
 * connection of its own.
 */
interface SqlDatabase {
  readonly repositories: (options: UserRepoOptions) => Layer.Layer<Repositories | SqlClient.SqlClient, DatabaseError>
  readonly migrate: (
    options: SchemaOptions
  ) => Effect.Effect<ReadonlyArray<readonly [number, string]>, MigrationError | SqlError | ConfigError.ConfigError>
}

type DatabaseError = ConfigError.ConfigError | SqlError

/** What `sqlRepositories` gives: every repository. */
type Repositories = Layer.Layer.Success<ReturnType<typeof sqlRepositories>>

/**
 * What a database adds to the plain adapters on its hot paths: fast ones (infrastructure/sql/fast/,
 * each held by its port's contract suite), over what `R` the database gives them; and, for a file,
 * the room it gives back.
 */
export interface FastAdapters<R = SqlClient.SqlClient> {
  readonly tokenHolders?: Layer.Layer<TokenHolders, SqlError, R>
  readonly refreshTokens?: Layer.Layer<RefreshTokenRepo, SqlError, R>
  readonly oidcGrants?: Layer.Layer<OidcGrants, SqlError, R>
  readonly oidcClients?: Layer.Layer<OidcClients, SqlError, R>
  readonly authorizationCodes?: Layer.Layer<AuthorizationCodes, SqlError, R>
  readonly users?: (options: UserRepoOptions) => Layer.Layer<UserRepo, SqlError, R>
  readonly storeSpace?: Layer.Layer<StoreSpace, never, R>
}

/** The repositories, the fast adapters among them, over the migrated connection `db` gives. */
const over = <R>(
  db: Layer.Layer<SqlClient.SqlClient | R, DatabaseError>,
  options: UserRepoOptions,
  fast: FastAdapters<SqlClient.SqlClient | R>
) => sqlRepositories(options, fast).pipe(Layer.provideMerge(db))

const sqlite = () => import("../infrastructure/sql/SqliteDatabase.js")

/** A SQLite database of `filename`, `:memory:` included. */
const sqliteDatabase = (filename: string): SqlDatabase => ({
  repositories: (options) =>
    over(
      imported(sqlite, (db) => db.layer(filename, options)),
      options,
      // A file can be read and written on connections of its own; another connection to
      // `:memory:` would be another database.
      filename === ":memory:" ? {} : sqliteFileAdapters(filename)
    ),
  migrate: (options) =>
    Effect.flatMap(Effect.promise(sqlite), (db) => db.prepare(options).pipe(Effect.provide(db.client(filename))))
})

const pg = () => import("../infrastructure/sql/PgDatabase.js")

/**
 * The SQL database of DATABASE_URL. The memory store is SQLite in memory: the same adapters and
 * the same transactions (all or nothing, one at a time) as a file, gone with the process
 * (docs/contributing.md, "One store semantics").
 */
const sqlDatabase = (url: DatabaseUrl): SqlDatabase => {
  switch (url.kind) {
    case "memory":
      return sqliteDatabase(":memory:")
    case "sqlite":
      return sqliteDatabase(url.filename)
    case "postgres":
      return {
        repositories: (options) =>
          over(
            imported(pg, (db) => db.layer(url.url, options)),
            options,
            postgresFastAdapters
          ),
        migrate: (options) =>
          Effect.flatMap(Effect.promise(pg), (db) =>
            db.prepare(options).pipe(Effect.provide(db.client(url.url, { maxConnections: 1 })))
          )
      }
  }
}

/**
 * The fast adapters of a SQLite file of its own. Their reads share one connection that only
 * reads (one layer, so built once however many adapters it is given to).
 */
export const sqliteFileAdapters = (filename: string): FastAdapters => {
  const reading = imported(
    () => import("../infrastructure/sql/fast/connections.js"),
    (connections) => connections.readingConnection(filename)
  )
  return {
    storeSpace: imported(
      () => import("../infrastructure/sql/StoreSpaceSqlite.js"),
      (space) => space.layer(filename)
    ),
    tokenHolders: imported(
      () => import("../infrastructure/sql/fast/TokenHoldersSqliteReader.js"),
      (reader) => reader.layer
    ).pipe(Layer.provide(reading)),
    refreshTokens: imported(
      () => import("../infrastructure/sql/fast/RefreshTokenRotationSqlite.js"),
      (rotation) => rotation.layer(filename)
    ),
    oidcGrants: imported(
      () => import("../infrastructure/sql/fast/OidcGrantsSqlite.js"),
      (grants) => grants.layer(filename)
    ).pipe(Layer.provide(reading)),
    oidcClients: imported(
      () => import("../infrastructure/sql/fast/OidcClientsSqliteReader.js"),
      (reader) => reader.layer
    ).pipe(Layer.provide(reading)),
    authorizationCodes: imported(
      () => import("../infrastructure/sql/fast/AuthorizationCodesSqliteReader.js"),
      (reader) => reader.layer
    ).pipe(Layer.provide(reading)),
    users: (options) =>
      imported(
        () => import("../infrastructure/sql/fast/UsersSqliteReader.js"),
        (reader) => reader.layer(options)
      ).pipe(Layer.provide(reading))
  }
}

/** The fast adapters of PostgreSQL: named statements on the client's own pool. */
export const postgresFastAdapters: FastAdapters<SqlClient.SqlClient | PgPool> = {
  tokenHolders: imported(
    () => import("../infrastructure/sql/fast/TokenHoldersPgReader.js"),
    (reader) => reader.layer
  ),
  refreshTokens: imported(
    () => import("../infrastructure/sql/fast/RefreshTokenRotationPg.js"),
    (rotation) => rotation.layer
  ),
  oidcClients: imported(
    () => import("../infrastructure/sql/fast/OidcClientsPgReader.js"),
    (reader) => reader.layer
  ),
  authorizationCodes: imported(
    () => import("../infrastructure/sql/fast/AuthorizationCodesPgReader.js"),
    (reader) => reader.layer
  ),
  oidcGrants: imported(
    () => import("../infrastructure/sql/fast/OidcGrantsPgReader.js"),
    (reader) => reader.layer
  ),
  users: (options) =>
    imported(
      () => import("../infrastructure/sql/fast/UsersPgReader.js"),
      (reader) => reader.layer(options)
    )
}

/** Every repository over a SQL client, SQLite or PostgreSQL alike; the plain adapters unless `fast` has others. */
export const sqlRepositories = <R = SqlClient.SqlClient>(options: UserRepoOptions = {}, fast: FastAdapters<R> = {}) => {
  const users: Layer.Layer<UserRepo, SqlError, R | SqlClient.SqlClient> =
    fast.users?.(options) ?? UserRepoSql.layerWith(options)
  return Layer.mergeAll(
    fast.refreshTokens ?? RefreshTokenRepoSql.layer,
    RoleRepoSql.layer,
    PasskeyRepoSql.layer,
    OAuthAccountRepoSql.layer,
    AuditLogSql.layer,
    EmailSignInRequestsSql.layer,
    AddressChangesSql.layer,
    OutboxSql.layer,
    WebhookEndpointRepoSql.layer,
    fast.oidcClients ?? OidcClientsSql.layer,
    OidcResourcesSql.layer,
    fast.authorizationCodes ?? AuthorizationCodesSql.layer,
    ConsentsSql.layer,
    ParkedRequestsSql.layer,
    fast.oidcGrants ?? OidcGrantsSql.layer,
    fast.storeSpace ?? StoreSpaceNone.layer,
    fast.tokenHolders ?? TokenHoldersSql.layer,
    TransactionSql.layer
  ).pipe(Layer.provideMerge(users))
}

/**
 * The repositories over the database of DATABASE_URL, migrated (the deployment's unique fields
 * included) before they use it, and its client (for a test's double of one of them). Used by serve, by every CLI command that touches storage and by
 * the tests' harness.
 */
export const database = (url: DatabaseUrl, options: UserRepoOptions = {}) => sqlDatabase(url).repositories(options)

/** The memory store's repositories: SQLite in memory, migrated. */
export const memoryRepositories = (options: UserRepoOptions = {}) => database({ kind: "memory" }, options)

/** Applies the pending migrations of DATABASE_URL; answers the ones applied, none for the memory store, which starts empty. */
export const migrate = (url: DatabaseUrl, options: SchemaOptions = {}) =>
  url.kind === "memory" ? Effect.succeedNone : Effect.asSome(sqlDatabase(url).migrate(options))
