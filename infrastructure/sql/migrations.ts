import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"

/**
 * Forward-only migrations, applied in order at start-up and by `portcullis migrate`. Times are
 * epoch milliseconds; booleans are 0/1 on SQLite.
 */
export const sqlite = Migrator.fromRecord({
  "0001_users_and_sessions": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE users (
      id TEXT PRIMARY KEY NOT NULL,
      email TEXT NOT NULL UNIQUE,
      hashed_password TEXT,
      is_active INTEGER NOT NULL DEFAULT 1,
      is_verified INTEGER NOT NULL DEFAULT 0,
      is_superuser INTEGER NOT NULL DEFAULT 0,
      created_at INTEGER NOT NULL
    )`
    yield* sql`CREATE TABLE user_roles (
      user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      role TEXT NOT NULL,
      PRIMARY KEY (user_id, role)
    )`
    yield* sql`CREATE TABLE token_families (
      family_id TEXT PRIMARY KEY NOT NULL,
      user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      ip_address TEXT,
      user_agent TEXT,
      created_at INTEGER NOT NULL,
      last_used_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      revoked_at INTEGER
    )`
    yield* sql`CREATE INDEX token_families_user ON token_families (user_id)`
    yield* sql`CREATE INDEX token_families_revoked ON token_families (revoked_at) WHERE revoked_at IS NOT NULL`
    yield* sql`CREATE TABLE refresh_tokens (
      digest TEXT PRIMARY KEY NOT NULL,
      family_id TEXT NOT NULL REFERENCES token_families(family_id) ON DELETE CASCADE,
      issued_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      rotated_at INTEGER,
      sealed_successor TEXT
    )`
    yield* sql`CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id)`
  }),
  // Roles are created on first use; the ones already held by users are registered here.
  "0002_role_permissions": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE roles (
      name TEXT PRIMARY KEY NOT NULL
    )`
    yield* sql`INSERT INTO roles (name) SELECT DISTINCT role FROM user_roles`
    yield* sql`CREATE TABLE role_permissions (
      role TEXT NOT NULL REFERENCES roles(name) ON DELETE CASCADE,
      permission TEXT NOT NULL,
      PRIMARY KEY (role, permission)
    )`
  }),
  // A deployment's custom user fields, as one JSON object per user (config/Deployment.ts).
  "0003_user_fields": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE users ADD COLUMN fields TEXT NOT NULL DEFAULT '{}'`
  }),
  // USER_ID_TYPE=integer: users.id stays TEXT (decimal text for integer ids), numbered from this
  // counter, which never goes back, so a deleted user's id is never given to another.
  "0004_user_id_sequence": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE id_sequences (
      name TEXT PRIMARY KEY NOT NULL,
      last_value INTEGER NOT NULL
    )`
    yield* sql`INSERT INTO id_sequences (name, last_value)
      SELECT 'users', COALESCE(MAX(CAST(id AS INTEGER)), 0) FROM users
      WHERE id GLOB '[1-9]*' AND id NOT GLOB '*[^0-9]*'`
  })
})

/**
 * The same migrations for PostgreSQL, with the same ids and meaning: times are epoch
 * milliseconds in BIGINT, booleans are BOOLEAN, custom fields are JSONB. Every lookup path has
 * an index: user_roles and role_permissions by their primary keys, the rest above (a unique
 * custom login field gets its expression index from UserRepoSql at start-up).
 */
export const postgres = Migrator.fromRecord({
  "0001_users_and_sessions": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE users (
      id TEXT PRIMARY KEY NOT NULL,
      email TEXT NOT NULL UNIQUE,
      hashed_password TEXT,
      is_active BOOLEAN NOT NULL DEFAULT TRUE,
      is_verified BOOLEAN NOT NULL DEFAULT FALSE,
      is_superuser BOOLEAN NOT NULL DEFAULT FALSE,
      created_at BIGINT NOT NULL
    )`
    yield* sql`CREATE TABLE user_roles (
      user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      role TEXT NOT NULL,
      PRIMARY KEY (user_id, role)
    )`
    yield* sql`CREATE TABLE token_families (
      family_id TEXT PRIMARY KEY NOT NULL,
      user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      ip_address TEXT,
      user_agent TEXT,
      created_at BIGINT NOT NULL,
      last_used_at BIGINT NOT NULL,
      expires_at BIGINT NOT NULL,
      revoked_at BIGINT
    )`
    yield* sql`CREATE INDEX token_families_user ON token_families (user_id)`
    yield* sql`CREATE INDEX token_families_revoked ON token_families (revoked_at) WHERE revoked_at IS NOT NULL`
    yield* sql`CREATE TABLE refresh_tokens (
      digest TEXT PRIMARY KEY NOT NULL,
      family_id TEXT NOT NULL REFERENCES token_families(family_id) ON DELETE CASCADE,
      issued_at BIGINT NOT NULL,
      expires_at BIGINT NOT NULL,
      rotated_at BIGINT,
      sealed_successor TEXT
    )`
    yield* sql`CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id)`
  }),
  "0002_role_permissions": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE roles (
      name TEXT PRIMARY KEY NOT NULL
    )`
    yield* sql`INSERT INTO roles (name) SELECT DISTINCT role FROM user_roles`
    yield* sql`CREATE TABLE role_permissions (
      role TEXT NOT NULL REFERENCES roles(name) ON DELETE CASCADE,
      permission TEXT NOT NULL,
      PRIMARY KEY (role, permission)
    )`
  }),
  "0003_user_fields": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE users ADD COLUMN fields JSONB NOT NULL DEFAULT '{}'::jsonb`
  }),
  "0004_user_id_sequence": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE id_sequences (
      name TEXT PRIMARY KEY NOT NULL,
      last_value BIGINT NOT NULL
    )`
    yield* sql`INSERT INTO id_sequences (name, last_value)
      SELECT 'users', COALESCE(MAX(CAST(id AS NUMERIC)), 0) FROM users WHERE id ~ '^[1-9][0-9]*$'`
  })
})

/** Applies every pending migration; answers the ones applied. */
export const migrate = (loader: Migrator.Loader) => Migrator.make({})({ loader })

/**
 * A layer that runs `prepare` (which applies the migrations) before anything uses the database,
 * and logs the migrations it applied.
 */
export const migratedBeforeUse = <E, R>(prepare: Effect.Effect<ReadonlyArray<readonly [number, string]>, E, R>) =>
  Layer.effectDiscard(
    prepare.pipe(
      Effect.tap((applied) =>
        applied.length === 0
          ? Effect.void
          : Effect.logInfo("migrations applied", { applied: applied.map(([id, name]) => `${id}_${name}`) })
      ),
      Effect.orDie
    )
  )
