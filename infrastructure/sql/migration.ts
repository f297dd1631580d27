import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

/**
 * The column types that differ between the dialects, so that each migration is written once:
 * times are epoch milliseconds (INTEGER on SQLite, BIGINT on PostgreSQL), booleans are 0/1 on
 * SQLite and BOOLEAN on PostgreSQL, JSON values are TEXT or JSONB.
 */
const columns = {
  millis: { pg: "BIGINT", sqlite: "INTEGER" },
  integer: { pg: "BIGINT", sqlite: "INTEGER" },
  trueByDefault: { pg: "BOOLEAN NOT NULL DEFAULT TRUE", sqlite: "INTEGER NOT NULL DEFAULT 1" },
  falseByDefault: { pg: "BOOLEAN NOT NULL DEFAULT FALSE", sqlite: "INTEGER NOT NULL DEFAULT 0" },
  emptyObject: { pg: "JSONB NOT NULL DEFAULT '{}'::jsonb", sqlite: "TEXT NOT NULL DEFAULT '{}'" },
  emptyList: { pg: "JSONB NOT NULL DEFAULT '[]'::jsonb", sqlite: "TEXT NOT NULL DEFAULT '[]'" },
  // AUTOINCREMENT: SQLite would otherwise give a deleted last row's id again, and ids are cursors.
  ascendingKey: { pg: "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY", sqlite: "INTEGER PRIMARY KEY AUTOINCREMENT" }
} as const

/** A column type of the client's dialect, as an SQL fragment. */
const columnTypes = (sql: SqlClient.SqlClient) => {
  const dialect = sql.onDialectOrElse({ pg: () => "pg" as const, orElse: () => "sqlite" as const })
  return (name: keyof typeof columns) => sql.literal(columns[name][dialect])
}

/** A migration body, given the client and the dialect's column types. */
export const migration = (
  body: (sql: SqlClient.SqlClient, type: ReturnType<typeof columnTypes>) => Effect.Effect<unknown, SqlError>
) => Effect.flatMap(SqlClient.SqlClient, (sql) => body(sql, columnTypes(sql)))
