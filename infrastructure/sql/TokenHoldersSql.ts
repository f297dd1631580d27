import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Either, Layer, Option, Schema } from "effect"
import { TokenHolders } from "../../application/ports/TokenHolders.js"
import { SqlInt } from "./columns.js"
import { unavailable } from "./failures.js"
import { readerOf } from "./SqliteDirect.js"
import { userColumns, usersFromRows } from "./userRows.js"

/** The session's state beside the user's columns: 1 live, 0 ended, null when the family does not exist. */
const decodeSessionLive = Schema.decodeUnknownEither(Schema.NullOr(SqlInt))

/**
 * The user and the state of the family in one statement. On the embedded database's file it runs
 * on the direct connection (SqliteDirect); elsewhere through the client.
 */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const read = yield* readerOf
  const columns = userColumns(sql)
  const userOf = usersFromRows()
  return TokenHolders.of({
    find: (userId, familyId) => {
      const statement = sql`SELECT ${columns},
          (SELECT CASE WHEN f.revoked_at IS NULL THEN 1 ELSE 0 END FROM token_families f WHERE f.family_id = ${familyId})
            AS session_live
        FROM users u WHERE u.id = ${userId}`
      return read(statement).pipe(
        Effect.flatMap((rows) => {
          if (rows[0] === undefined) return Either.right(Option.none())
          const { session_live, ...row } = rows[0]
          return Either.zipWith(userOf(row), decodeSessionLive(session_live), (user, live) =>
            Option.some({ user, sessionEnded: live !== 1 })
          )
        }),
        unavailable
      )
    }
  })
})

export const layer = Layer.effect(TokenHolders, make)
