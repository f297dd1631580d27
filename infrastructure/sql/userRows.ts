import type * as SqlClient from "@effect/sql/SqlClient"
import { Either, Option, Schema } from "effect"
import type { ParseError } from "effect/ParseResult"
import { CustomFieldValues, User } from "../../domain/User.js"
import { validated } from "../../domain/validated.js"
import { SqlBoolean, SqlInt, SqlMillis } from "./columns.js"

/** A users row joined with its roles: the domain's User with storage encodings. */
export const UserRow = Schema.Struct({
  ...User.fields,
  is_active: SqlBoolean,
  is_verified: SqlBoolean,
  is_superuser: SqlBoolean,
  created_at: SqlMillis,
  credential_version: SqlInt,
  roles: Schema.parseJson(Schema.Array(Schema.String)),
  fields: Schema.parseJson(CustomFieldValues)
})

/** The columns of a UserRow, from `users u`; roles and fields reach the row as JSON text on both dialects. */
export const userColumns = (sql: SqlClient.SqlClient) =>
  sql`u.id, u.email, u.hashed_password, u.is_active, u.is_verified, u.is_superuser, u.created_at, u.credential_version, ${sql.onDialectOrElse(
    {
      pg: () => sql`u.fields::text AS fields,
      (SELECT COALESCE(json_agg(r.role ORDER BY r.role), '[]'::json)::text FROM user_roles r WHERE r.user_id = u.id) AS roles`,
      orElse: () => sql`u.fields,
      (SELECT json_group_array(r.role) FROM user_roles r WHERE r.user_id = u.id) AS roles`
    }
  )}`

const decodeUserRow = Schema.decodeUnknownEither(UserRow)

/** The user a row (UserRow's columns) holds. */
export const userOfRow = (row: unknown): Either.Either<User, ParseError> =>
  Either.map(decodeUserRow(row), (decoded) => new User(decoded, validated))

/** The user the rows of a read of one user hold, if any, read from its row by `userOf`. */
export const userOfRows = (
  rows: ReadonlyArray<Readonly<Record<string, unknown>>>,
  userOf: (row: Readonly<Record<string, unknown>>) => Either.Either<User, ParseError> = userOfRow
): Either.Either<Option.Option<User>, ParseError> =>
  rows[0] === undefined ? Either.right(Option.none()) : Either.map(userOf(rows[0]), Option.some)

/**
 * The read of a user by id: the plain adapter (UserRepoSql) runs it through the client, the fast
 * ones (fast/Users*Reader) run it on SQLite's reading connection or named on PostgreSQL.
 */
export const readStatements = (sql: SqlClient.SqlClient) => ({
  findById: (id: string) => sql`SELECT ${userColumns(sql)} FROM users u WHERE u.id = ${id}`
})
