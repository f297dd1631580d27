import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, Option } from "effect"
import { TokenHolders } from "../../../application/ports/TokenHolders.js"
import { failingAsUnavailable } from "../failures.js"
import { PgPool } from "../PgDatabase.js"
import * as TokenHoldersSql from "../TokenHoldersSql.js"
import { holderOfRows, presentedOfRows, statements } from "../TokenHoldersSql.js"
import { named } from "./named.js"
import { sameRowsSameUsers } from "./sameRows.js"

/**
 * TokenHolders on PostgreSQL, read outside @effect/sql's client: each read is one named statement
 * on the client's own pool (fast/named.ts), bounded by one timer, where the client spends a span,
 * a compilation and two fibers on each; a user's row read again unchanged is not decoded again.
 * The statements and the reading of their rows are the plain adapter's (TokenHoldersSql).
 *
 * A read from the pool sees what is committed. Inside a transaction of the client (the
 * Transaction port), whose writes only its own connection sees, the read is the plain adapter's,
 * on that connection.
 */
export const layer = Layer.effect(
  TokenHolders,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const pool = yield* PgPool
    const plain = yield* TokenHoldersSql.make
    const statement = statements(sql)
    const holder = named(pool, "portcullis_token_holder", statement.holder)
    const presented = named(pool, "portcullis_presented_refresh", statement.presented)
    const userOf = sameRowsSameUsers()
    return TokenHolders.of({
      find: (userId, familyId) =>
        Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (open) =>
          Option.isSome(open)
            ? plain.find(userId, familyId)
            : failingAsUnavailable(Effect.flatMap(holder(userId, familyId), (rows) => holderOfRows(rows, userOf)))
        ),
      presented: (digest) =>
        Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (open) =>
          Option.isSome(open)
            ? plain.presented(digest)
            : failingAsUnavailable(Effect.flatMap(presented(digest), (rows) => presentedOfRows(rows, userOf)))
        )
    })
  })
)
