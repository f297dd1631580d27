import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Either, Layer, Option, Schema } from "effect"
import type { ParseError } from "effect/ParseResult"
import { type PresentedRefresh, type TokenHolder, TokenHolders } from "../../application/ports/TokenHolders.js"
import type { User } from "../../domain/User.js"
import { SqlInt } from "./columns.js"
import { unavailable } from "./failures.js"
import { tokenWithFamily, tokenWithFamilyColumns, tokenWithFamilyNames } from "./tokenRows.js"
import { userColumns, userOfRow } from "./userRows.js"

/** The session's state beside the user's columns: 1 live, 0 ended, null when the family does not exist. */
const decodeSessionLive = Schema.decodeUnknownEither(Schema.NullOr(SqlInt))

/** A row's columns split into those of `names` and the rest. */
const split = (row: Readonly<Record<string, unknown>>, names: ReadonlySet<string>) => {
  const chosen: Record<string, unknown> = {}
  const rest: Record<string, unknown> = {}
  for (const name in row) (names.has(name) ? chosen : rest)[name] = row[name]
  return [chosen, rest] as const
}

/**
 * The two statements, built with the client (and so for its dialect): the user and the state of
 * the family, which every authenticated request reads; a refresh token with its family and user,
 * which every refresh reads.
 */
export const statements = (sql: SqlClient.SqlClient) => {
  const columns = userColumns(sql)
  return {
    holder: (userId: string, familyId: string) =>
      sql`SELECT ${columns},
          (SELECT CASE WHEN f.revoked_at IS NULL THEN 1 ELSE 0 END FROM token_families f WHERE f.family_id = ${familyId})
            AS session_live
        FROM users u WHERE u.id = ${userId}`,
    presented: (digest: string) =>
      sql`SELECT ${tokenWithFamilyColumns(sql)}, ${columns}
        FROM refresh_tokens t JOIN token_families f ON f.family_id = t.family_id
          LEFT JOIN users u ON u.id = f.user_id
        WHERE t.digest = ${digest}`
  }
}

/** How a user is read from its row's columns. */
export type UserOfRow = (row: Readonly<Record<string, unknown>>) => Either.Either<User, ParseError>

/** What the rows of `holder` tell. */
export const holderOfRows = (
  rows: ReadonlyArray<Readonly<Record<string, unknown>>>,
  userOf: UserOfRow = userOfRow
): Either.Either<Option.Option<TokenHolder>, ParseError> => {
  if (rows[0] === undefined) return Either.right(Option.none())
  const { session_live, ...row } = rows[0]
  return Either.zipWith(userOf(row), decodeSessionLive(session_live), (user, live) =>
    Option.some({ user, sessionEnded: live !== 1 })
  )
}

/**
 * What the rows of `presented` tell. The user is joined, not required: the token is answered
 * whatever became of its user, as the two reads this one replaces answered it.
 */
export const presentedOfRows = (
  rows: ReadonlyArray<Readonly<Record<string, unknown>>>,
  userOf: UserOfRow = userOfRow
): Either.Either<Option.Option<PresentedRefresh>, ParseError> => {
  if (rows[0] === undefined) return Either.right(Option.none())
  const [token, user] = split(rows[0], tokenWithFamilyNames)
  return Either.zipWith(
    tokenWithFamily(token),
    user.id === null ? Either.right(Option.none()) : Either.map(userOf(user), Option.some),
    (found, owner) => Option.some({ ...found, user: owner })
  )
}

/** The user and the state of the family, or a refresh token with its family and user, each in one statement. */
export const make = Effect.map(SqlClient.SqlClient, (sql) => {
  const statement = statements(sql)
  return TokenHolders.of({
    find: (userId, familyId) =>
      statement.holder(userId, familyId).pipe(
        Effect.flatMap((rows) => holderOfRows(rows)),
        unavailable
      ),
    presented: (digest) =>
      statement.presented(digest).pipe(
        Effect.flatMap((rows) => presentedOfRows(rows)),
        unavailable
      )
  })
})

export const layer = Layer.effect(TokenHolders, make)
