import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { AuthorizationCodes } from "../../../application/ports/AuthorizationCodes.js"
import * as AuthorizationCodesSql from "../AuthorizationCodesSql.js"
import { PgPool } from "../PgDatabase.js"
import { named } from "./named.js"
import { readOutsideTransactions } from "./reading.js"

/**
 * AuthorizationCodes on PostgreSQL, its `find` (every redemption's first read) a named statement
 * on the client's own pool (named.ts, reading.ts). The read only decides whether to try: the
 * claim, in the redemption's transaction, is what spends a code. Everything else is the plain
 * adapter's.
 */
export const layer = Layer.effect(
  AuthorizationCodes,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const pool = yield* PgPool
    const plain = yield* AuthorizationCodesSql.make
    const find = named(pool, "portcullis_oidc_code", AuthorizationCodesSql.readStatements(sql).find)
    return AuthorizationCodes.of({
      ...plain,
      find: readOutsideTransactions(plain.find, find, AuthorizationCodesSql.codeOfRows)
    })
  })
)
