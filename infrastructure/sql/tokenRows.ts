import type * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Either, Option, Schema } from "effect"
import { StoredRefreshToken, TokenFamily } from "../../domain/Session.js"
import { validated } from "../../domain/validated.js"
import { SqlMillis } from "./columns.js"

const OptionalMillis = Schema.OptionFromNullOr(SqlMillis)

/** A refresh_tokens row joined with its family; family columns carry a `family_` prefix. */
const TokenWithFamilyRow = Schema.Struct({
  ...StoredRefreshToken.fields,
  issued_at: SqlMillis,
  expires_at: SqlMillis,
  rotated_at: OptionalMillis,
  user_id: TokenFamily.fields.user_id,
  ip_address: TokenFamily.fields.ip_address,
  user_agent: TokenFamily.fields.user_agent,
  family_created_at: SqlMillis,
  family_last_used_at: SqlMillis,
  family_expires_at: SqlMillis,
  family_revoked_at: OptionalMillis
})
// Decoded in one synchronous pass (no step of the runtime a field): every refresh reads one.
const decodeTokenWithFamily = Schema.decodeUnknownEither(TokenWithFamilyRow)

/** The names of the columns `tokenWithFamilyColumns` selects: what a row holds beside them is another table's. */
export const tokenWithFamilyNames: ReadonlySet<string> = new Set(Object.keys(TokenWithFamilyRow.fields))

/** The columns of a TokenWithFamilyRow, from `refresh_tokens t JOIN token_families f`. */
export const tokenWithFamilyColumns = (sql: SqlClient.SqlClient) =>
  sql`t.digest, t.family_id, t.issued_at, t.expires_at, t.rotated_at, t.sealed_successor,
    f.user_id, f.ip_address, f.user_agent, f.created_at AS family_created_at,
    f.last_used_at AS family_last_used_at, f.expires_at AS family_expires_at, f.revoked_at AS family_revoked_at`

/** The token and its family of a TokenWithFamilyRow. */
export const tokenWithFamily = (row: unknown) =>
  Either.map(decodeTokenWithFamily(row), (decoded) => ({
    token: new StoredRefreshToken(
      {
        digest: decoded.digest,
        family_id: decoded.family_id,
        issued_at: decoded.issued_at,
        expires_at: decoded.expires_at,
        rotated_at: decoded.rotated_at,
        sealed_successor: decoded.sealed_successor
      },
      validated
    ),
    family: new TokenFamily(
      {
        family_id: decoded.family_id,
        user_id: decoded.user_id,
        ip_address: decoded.ip_address,
        user_agent: decoded.user_agent,
        created_at: decoded.family_created_at,
        last_used_at: decoded.family_last_used_at,
        expires_at: decoded.family_expires_at,
        revoked_at: decoded.family_revoked_at
      },
      validated
    )
  }))

/** The token and its family from the first of `rows`; none when there is no row. */
export const firstTokenWithFamily = (rows: ReadonlyArray<unknown>) =>
  rows[0] === undefined ? Effect.succeedNone : Effect.map(tokenWithFamily(rows[0]), Option.some)
