import { Effect, Schema } from "effect"

/**
 * An integer column: a number on SQLite, and on PostgreSQL a BIGINT, which node-postgres
 * answers as a decimal string so that no precision is lost.
 */
export const SqlInt = Schema.Union(Schema.Int, Schema.compose(Schema.NumberFromString, Schema.Int))

/** The one number a `SELECT COUNT(*) AS n` answers (PostgreSQL gives counts as strings). */
export const countOf = (rows: ReadonlyArray<unknown>) => Effect.map(decodeCount(rows), (decoded) => decoded[0]?.n ?? 0)
const decodeCount = Schema.decodeUnknown(Schema.Array(Schema.Struct({ n: SqlInt })))

/** An instant stored as epoch milliseconds (INTEGER on SQLite, BIGINT on PostgreSQL). */
export const SqlMillis = Schema.compose(SqlInt, Schema.DateTimeUtcFromNumber)

/** SQLite answers booleans as 0/1, PostgreSQL as booleans. */
export const SqlBoolean = Schema.Union(
  Schema.Boolean,
  Schema.transform(Schema.Number, Schema.Boolean, { decode: (n) => n !== 0, encode: (b) => (b ? 1 : 0) })
)
