import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { OidcGrants } from "../../../application/ports/OidcGrants.js"
import * as OidcGrantsSql from "../OidcGrantsSql.js"
import { PgPool } from "../PgDatabase.js"
import { named } from "./named.js"
import { readOutsideTransactions } from "./reading.js"

/**
 * OidcGrants on PostgreSQL, its reads of a presented refresh token and of a grant (every refresh
 * grant's, every userinfo request's) named statements on the client's own pool (named.ts,
 * reading.ts). Everything else, the rotation included, is the plain adapter's.
 */
export const layer = Layer.effect(
  OidcGrants,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const pool = yield* PgPool
    const plain = yield* OidcGrantsSql.make
    const reads = OidcGrantsSql.readStatements(sql)
    const presented = named(pool, "portcullis_oidc_presented", reads.presented)
    const find = named(pool, "portcullis_oidc_grant", reads.find)
    return OidcGrants.of({
      ...plain,
      presented: readOutsideTransactions(plain.presented, presented, OidcGrantsSql.presentedOfRows),
      find: readOutsideTransactions(plain.find, find, OidcGrantsSql.grantOfRows)
    })
  })
)
