import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { AuthorizationCodes } from "../../../application/ports/AuthorizationCodes.js"
import * as AuthorizationCodesSql from "../AuthorizationCodesSql.js"
import { ReadingConnection } from "./connections.js"
import { readingOn, readOutsideTransactions } from "./reading.js"

/**
 * AuthorizationCodes on a SQLite file, its `find` (every redemption's first read) on a reading
 * the file's reading connection (reading.ts, connections.ts). The read only decides whether to try: the claim, in the
 * redemption's transaction, is what spends a code, so a code redeemed meanwhile is still refused
 * there. Everything else is the plain adapter's.
 */
export const layer = Layer.scoped(
  AuthorizationCodes,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const plain = yield* AuthorizationCodesSql.make
    const db = yield* ReadingConnection
    const find = readingOn(db, AuthorizationCodesSql.readStatements(sql).find)
    return AuthorizationCodes.of({
      ...plain,
      find: readOutsideTransactions(plain.find, find, AuthorizationCodesSql.codeOfRows)
    })
  })
)
