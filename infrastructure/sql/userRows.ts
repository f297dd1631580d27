import type * as SqlClient from "@effect/sql/SqlClient"
import { Either, Schema } from "effect"
import type { ParseError } from "effect/ParseResult"
import { CustomFieldValues, User } from "../../domain/User.js"
import { validated } from "../../domain/validated.js"
import { remembered } from "../remembered.js"
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

type Columns = Readonly<Record<string, unknown>>

interface Decoded {
  readonly columns: Columns
  readonly count: number
  readonly user: User
}

/** The number of columns of `row` when each holds what `known` holds, else -1. */
const sameColumns = (known: Columns, row: Columns): number => {
  let count = 0
  for (const name in row) {
    if (row[name] !== known[name]) return -1
    count++
  }
  return count
}

/**
 * Users from their rows (UserRow's columns), each row decoded once while it holds the same
 * values: the user decoded from a row is kept by its id (the last 4,096 ids), and a row read
 * later with the very same values in every column answers that same user. Every read still goes
 * to the database, and a row that changed in any column (a role, a flag, the password) is decoded
 * afresh: only the decoding, a pure function of the row, is saved; it was about a tenth of an
 * authenticated request's CPU.
 */
export const usersFromRows = () => {
  const decoded = remembered<unknown, Decoded>(4096)
  return (columns: Columns): Either.Either<User, ParseError> => {
    const known = decoded.get(columns.id)
    if (known !== undefined && sameColumns(known.columns, columns) === known.count) return Either.right(known.user)
    return Either.map(decodeUserRow(columns), (row) => {
      const user = new User(row, validated)
      decoded.set(columns.id, { columns, count: Object.keys(columns).length, user })
      return user
    })
  }
}
