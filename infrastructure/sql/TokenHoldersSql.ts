import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, Option, Schema } from "effect"
import { TokenHolders } from "../../application/ports/TokenHolders.js"
import { User } from "../../domain/User.js"
import { validated } from "../../domain/validated.js"
import { SqlInt } from "./columns.js"
import { unavailable } from "./failures.js"
import { readerOf } from "./SqliteDirect.js"
import { UserRow, userColumns } from "./userRows.js"

/** A user's row with its session's state: 1 live, 0 ended, null when the family does not exist. */
const HolderRow = Schema.Struct({ ...UserRow.fields, session_live: Schema.NullOr(SqlInt) })
const decodeHolders = Schema.decodeUnknown(Schema.Array(HolderRow))

/**
 * The user and the state of the family in one statement. On the embedded database's file it runs
 * on the direct connection (SqliteDirect); elsewhere through the client.
 */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const read = yield* readerOf
  const columns = userColumns(sql)
  return TokenHolders.of({
    find: (userId, familyId) => {
      const statement = sql`SELECT ${columns},
          (SELECT CASE WHEN f.revoked_at IS NULL THEN 1 ELSE 0 END FROM token_families f WHERE f.family_id = ${familyId})
            AS session_live
        FROM users u WHERE u.id = ${userId}`
      return read(statement).pipe(
        Effect.flatMap(decodeHolders),
        Effect.map((found) =>
          Option.map(Option.fromNullable(found[0]), ({ session_live, ...row }) => ({
            user: new User(row, validated),
            sessionEnded: session_live !== 1
          }))
        ),
        unavailable
      )
    }
  })
})

export const layer = Layer.effect(TokenHolders, make)
