import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { OidcClients } from "../../../application/ports/OidcClients.js"
import { unavailable } from "../failures.js"
import * as OidcClientsSql from "../OidcClientsSql.js"
import { connection } from "./connections.js"
import { attempt, prepared } from "./prepared.js"
import { unlessInTransaction } from "./transactions.js"

/**
 * OidcClients on a SQLite file, its `find` (the first read of every token, revocation and
 * introspection request) on a reading connection of its own, outside @effect/sql's client, as
 * TokenHoldersSqliteReader reads a token's holder: the file's committed state (a client removed
 * or its secret replaced is read as such by the next request), without the client's permit. The
 * statement and the reading of its rows are the plain adapter's; inside a transaction of the
 * client, its read too.
 */
export const layer = (filename: string) =>
  Layer.scoped(
    OidcClients,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const plain = yield* OidcClientsSql.make
      const db = yield* connection(filename, "reading")
      const find = prepared(db, OidcClientsSql.readStatements(sql).find)
      return OidcClients.of({
        ...plain,
        find: (clientId) =>
          unlessInTransaction(plain.find(clientId), () =>
            unavailable(Effect.suspend(() => attempt(() => OidcClientsSql.clientOfRows(find.all(clientId)))))
          )
      })
    })
  )
