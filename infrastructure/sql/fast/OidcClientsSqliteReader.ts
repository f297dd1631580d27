import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { OidcClients } from "../../../application/ports/OidcClients.js"
import * as OidcClientsSql from "../OidcClientsSql.js"
import { ReadingConnection } from "./connections.js"
import { readingOn, readOutsideTransactions } from "./reading.js"

/**
 * OidcClients on a SQLite file, its `find` (the first read of every token, revocation and
 * introspection request) on the file's reading connection (reading.ts, connections.ts): a client removed or its
 * secret replaced is read as such by the next request. Everything else is the plain adapter's.
 */
export const layer = Layer.scoped(
  OidcClients,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const plain = yield* OidcClientsSql.make
    const db = yield* ReadingConnection
    const find = readingOn(db, OidcClientsSql.readStatements(sql).find)
    return OidcClients.of({
      ...plain,
      find: readOutsideTransactions(plain.find, find, OidcClientsSql.clientOfRows)
    })
  })
)
