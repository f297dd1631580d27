import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { TokenHolders } from "../../../application/ports/TokenHolders.js"
import { failingAsUnavailable } from "../failures.js"
import { holderOfRows, presentedOfRows, statements } from "../TokenHoldersSql.js"
import { ReadingConnection } from "./connections.js"
import { readingOn } from "./reading.js"
import { sameRowsSameUsers } from "./sameRows.js"

/**
 * TokenHolders on a SQLite file, read on the file's reading connection (connections.ts), outside
 * @effect/sql's client: each read is one synchronous call of better-sqlite3 on a statement
 * prepared once, where the client's path (its span, the connection's permit, its statement cache,
 * a compilation of the statement) costs a token's every use several times what SQLite spends on
 * it. The statements and the reading of their rows are the plain adapter's (TokenHoldersSql).
 *
 * In WAL mode the reader sees every transaction committed, on any connection of any process, and
 * nothing that is not: what is acknowledged (a revocation above all) is committed, so it is what
 * is read. Not for a read inside a transaction, which it would not see: neither of its callers
 * (an authenticated request, a refresh before its rotation) makes one there.
 */
export const layer = Layer.scoped(
  TokenHolders,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const db = yield* ReadingConnection
    const statement = statements(sql)
    const holder = readingOn(db, statement.holder)
    const presented = readingOn(db, statement.presented)
    const userOf = sameRowsSameUsers()
    return TokenHolders.of({
      find: (userId, familyId) =>
        failingAsUnavailable(Effect.flatMap(holder(userId, familyId), (rows) => holderOfRows(rows, userOf))),
      presented: (digest) =>
        failingAsUnavailable(Effect.flatMap(presented(digest), (rows) => presentedOfRows(rows, userOf)))
    })
  })
)
