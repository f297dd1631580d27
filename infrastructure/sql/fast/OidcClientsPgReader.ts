import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { OidcClients } from "../../../application/ports/OidcClients.js"
import * as OidcClientsSql from "../OidcClientsSql.js"
import { PgPool } from "../PgDatabase.js"
import { named } from "./named.js"
import { readOutsideTransactions } from "./reading.js"

/**
 * OidcClients on PostgreSQL, its `find` (the first read of every token, revocation and
 * introspection request) a named statement on the client's own pool (named.ts, reading.ts).
 * Everything else is the plain adapter's.
 */
export const layer = Layer.effect(
  OidcClients,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const pool = yield* PgPool
    const plain = yield* OidcClientsSql.make
    const find = named(pool, "portcullis_oidc_client", OidcClientsSql.readStatements(sql).find)
    return OidcClients.of({ ...plain, find: readOutsideTransactions(plain.find, find, OidcClientsSql.clientOfRows) })
  })
)
