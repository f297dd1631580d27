import type * as SqlClient from "@effect/sql/SqlClient"

/** The JSON path of a custom field in SQLite's json functions. Names are checked identifiers (config/Deployment.ts). */
export const customFieldPath = (field: string) => `$.${field}`

/**
 * The value of a custom field of `users` as SQL text. The unique index of a custom login field
 * and the lookup by it use this same expression, so that the index serves the lookup.
 */
export const customFieldValue = (sql: SqlClient.SqlClient, field: string): string =>
  sql.onDialectOrElse({
    pg: () => `fields->>'${field.replaceAll("'", "''")}'`,
    orElse: () => `json_extract(fields, '${customFieldPath(field)}')`
  })
