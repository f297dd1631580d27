import { Layer, Logger, LogLevel } from "effect"
import type { OAuthAccountRepo } from "../../application/ports/OAuthAccountRepo.js"
import type { PasskeyRepo } from "../../application/ports/PasskeyRepo.js"
import type { RefreshTokenRepo } from "../../application/ports/RefreshTokenRepo.js"
import type { RoleRepo } from "../../application/ports/RoleRepo.js"
import type { UserRepo } from "../../application/ports/UserRepo.js"
import * as OAuthAccountRepoMemory from "../../infrastructure/memory/OAuthAccountRepoMemory.js"
import * as PasskeyRepoMemory from "../../infrastructure/memory/PasskeyRepoMemory.js"
import * as RefreshTokenRepoMemory from "../../infrastructure/memory/RefreshTokenRepoMemory.js"
import * as RoleRepoMemory from "../../infrastructure/memory/RoleRepoMemory.js"
import * as UserRepoMemory from "../../infrastructure/memory/UserRepoMemory.js"
import * as OAuthAccountRepoSql from "../../infrastructure/sql/OAuthAccountRepoSql.js"
import * as PasskeyRepoSql from "../../infrastructure/sql/PasskeyRepoSql.js"
import * as RefreshTokenRepoSql from "../../infrastructure/sql/RefreshTokenRepoSql.js"
import * as RoleRepoSql from "../../infrastructure/sql/RoleRepoSql.js"
import * as SqliteDatabase from "../../infrastructure/sql/SqliteDatabase.js"
import * as UserRepoSql from "../../infrastructure/sql/UserRepoSql.js"
import type { UserRepoOptions } from "../../infrastructure/users.js"
import * as Postgres from "./postgres.js"

export const quiet = Logger.minimumLogLevel(LogLevel.Warning)

type Repositories = UserRepo | RefreshTokenRepo | RoleRepo | PasskeyRepo | OAuthAccountRepo

/** A database the contract suites run against. */
export interface Database {
  readonly name: string
  /** Skipped when the database it needs is not configured. */
  readonly skip: boolean
  /** The repositories over a fresh, empty database of this kind, one per call. */
  readonly repositories: (options?: UserRepoOptions) => Layer.Layer<Repositories, unknown>
}

/** The passkey and OAuth account repositories read owners through the users' one: the same instance. */
const sqlRepositories = (options: UserRepoOptions) =>
  Layer.mergeAll(RefreshTokenRepoSql.layer, RoleRepoSql.layer, PasskeyRepoSql.layer, OAuthAccountRepoSql.layer).pipe(
    Layer.provideMerge(UserRepoSql.layerWith(options))
  )

/** The SQLite repositories over one migrated `:memory:` database, which stays reachable for checks. */
export const sqliteWithClient = (options: UserRepoOptions = {}) =>
  sqlRepositories(options).pipe(Layer.provideMerge(SqliteDatabase.layer(":memory:", options)), Layer.provide(quiet))

/** Memory, SQLite, and PostgreSQL (each in a schema of its own) when TEST_DATABASE_URL is set. */
export const databases: ReadonlyArray<Database> = [
  {
    name: "memory",
    skip: false,
    repositories: (options = {}) =>
      Layer.mergeAll(
        RefreshTokenRepoMemory.layer,
        RoleRepoMemory.layer,
        PasskeyRepoMemory.layer,
        OAuthAccountRepoMemory.layer
      ).pipe(Layer.provideMerge(UserRepoMemory.layerWith(options)))
  },
  { name: "sqlite", skip: false, repositories: sqliteWithClient },
  {
    name: "postgresql",
    skip: Postgres.noPostgres,
    repositories: (options = {}) => sqlRepositories(options).pipe(Layer.provide(Postgres.layer(options)))
  }
]
