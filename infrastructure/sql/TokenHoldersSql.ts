import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Either, Layer, Option, Schema } from "effect"
import { TokenHolders } from "../../application/ports/TokenHolders.js"
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

/** The user and the state of the family, or a refresh token with its family and user, each in one statement. */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const columns = userColumns(sql)
  // Every authenticated request runs the first, every refresh the second.
  const holderOf = (userId: string, familyId: string) =>
    sql`SELECT ${columns},
          (SELECT CASE WHEN f.revoked_at IS NULL THEN 1 ELSE 0 END FROM token_families f WHERE f.family_id = ${familyId})
            AS session_live
        FROM users u WHERE u.id = ${userId}`
  const presentedOf = (digest: string) =>
    sql`SELECT ${tokenWithFamilyColumns(sql)}, ${columns}
        FROM refresh_tokens t JOIN token_families f ON f.family_id = t.family_id
          LEFT JOIN users u ON u.id = f.user_id
        WHERE t.digest = ${digest}`
  return TokenHolders.of({
    find: (userId, familyId) =>
      holderOf(userId, familyId).pipe(
        Effect.flatMap((rows) => {
          if (rows[0] === undefined) return Either.right(Option.none())
          const { session_live, ...row } = rows[0]
          return Either.zipWith(userOfRow(row), decodeSessionLive(session_live), (user, live) =>
            Option.some({ user, sessionEnded: live !== 1 })
          )
        }),
        unavailable
      ),

    // The user is joined, not required: the token is answered whatever became of its user, as
    // the two reads this one replaces answered it.
    presented: (digest) =>
      presentedOf(digest).pipe(
        Effect.flatMap((rows) => {
          if (rows[0] === undefined) return Effect.succeedNone
          const [token, user] = split(rows[0], tokenWithFamilyNames)
          return Effect.zipWith(
            tokenWithFamily(token),
            user.id === null ? Effect.succeedNone : Effect.map(userOfRow(user), Option.some),
            (found, owner) => Option.some({ ...found, user: owner })
          )
        }),
        unavailable
      )
  })
})

export const layer = Layer.effect(TokenHolders, make)
