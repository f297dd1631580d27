// Running the schema's migrations (schemaMigrations.ts holds them) and the deployment's own
// indexes, before anything uses the database.
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Layer } from "effect"
import { customFieldValue } from "./customFields.js"
import { isUniqueViolation } from "./failures.js"
import { loader } from "./schemaMigrations.js"

/** Applies every pending migration of `migrations`; answers the ones applied. */
export const migrate = (migrations: Migrator.Loader = loader) => Migrator.make({})({ loader: migrations })

/** What a deployment adds to the schema: custom fields no two users may share (a custom LOGIN_FIELD). */
export interface SchemaOptions {
  readonly uniqueFields?: ReadonlyArray<string>
}

/** PostgreSQL: duplicate_table (42P07), as a racing CREATE INDEX IF NOT EXISTS may fail. */
const isDuplicateIndex = (error: SqlError) =>
  (error.cause as { readonly code?: unknown } | undefined)?.code === "42P07" || isUniqueViolation(error)

/**
 * The deployment's own indexes, after the numbered migrations: uniqueness of a custom login
 * field is the database's, like the email's, so an expression index on its JSON value makes a
 * racing duplicate fail at write time, and serves the lookup. Field names are checked
 * identifiers (config/Deployment.ts).
 */
const deploymentIndexes = (options: SchemaOptions) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.forEach(
      options.uniqueFields ?? [],
      (field) =>
        sql
          .unsafe(
            `CREATE UNIQUE INDEX IF NOT EXISTS users_unique_${field} ON users ((${customFieldValue(sql, field)}))`
          )
          // Workers starting together may race to create it; one of them does.
          .pipe(Effect.catchIf(isDuplicateIndex, () => Effect.void)),
      { discard: true }
    )
  )

/** The numbered migrations, then the deployment's indexes; answers the migrations applied. */
export const prepareSchema = (options: SchemaOptions) => Effect.tap(migrate(), () => deploymentIndexes(options))

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
