import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { TokenHolders } from "../../../application/ports/TokenHolders.js"
import { failingAsUnavailable } from "../failures.js"
import { PgPool } from "../PgDatabase.js"
import * as TokenHoldersSql from "../TokenHoldersSql.js"
import { named } from "./named.js"
import { sameRowsSameUsers } from "./sameRows.js"
import { unlessInTransaction } from "./transactions.js"

/**
 * TokenHolders on PostgreSQL, read outside @effect/sql's client: each read is one named statement
 * on the client's own pool (fast/named.ts), bounded by one timer, where the client spends a span,
 * a compilation and two fibers on each; a user's row read again unchanged is not decoded again.
 * The statements and the reading of their rows are the plain adapter's (TokenHoldersSql).
 * Inside a transaction of the client, the plain adapter's read (`unlessInTransaction`).
 */
export const layer = Layer.effect(
  TokenHolders,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const pool = yield* PgPool
    const plain = yield* TokenHoldersSql.make
    const statement = TokenHoldersSql.statements(sql)
    const holder = named(pool, "portcullis_token_holder", statement.holder)
    const presented = named(pool, "portcullis_presented_refresh", statement.presented)
    const userOf = sameRowsSameUsers()
    return TokenHolders.of({
      find: (userId, familyId) =>
        unlessInTransaction(plain.find(userId, familyId), () =>
          failingAsUnavailable(
            Effect.flatMap(holder(userId, familyId), (rows) => TokenHoldersSql.holderOfRows(rows, userOf))
          )
        ),
      presented: (digest) =>
        unlessInTransaction(plain.presented(digest), () =>
          failingAsUnavailable(
            Effect.flatMap(presented(digest), (rows) => TokenHoldersSql.presentedOfRows(rows, userOf))
          )
        )
    })
  })
)
