import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { OidcGrants } from "../../../application/ports/OidcGrants.js"
import type { GrantToken } from "../../../domain/oidc/Grant.js"
import * as OidcGrantsSql from "../OidcGrantsSql.js"
import { grantStatements, presentedOfRows, tokenValues } from "../OidcGrantsSql.js"
import { connection, ownOrPlain } from "./connections.js"
import { attempt, prepared } from "./prepared.js"

/**
 * OidcGrants on a SQLite file, its refresh grant's two calls (the token presented, read with its
 * grant; the rotation, committed) each one synchronous call of better-sqlite3 on statements
 * prepared once on connections of its own, outside @effect/sql's client, as the first-party
 * refresh's are (fast/TokenHoldersSqliteReader, fast/RefreshTokenRotationSqlite) and under the
 * same guarantees: the reader sees what is committed on any connection (WAL); the rotation is
 * BEGIN IMMEDIATE, the plain adapter's three statements and a COMMIT with synchronous=FULL, holding
 * the client's permit while it commits, and rolls back whole on any failure. Inside a transaction
 * of the client both are the plain adapter's. Everything else, and every statement, is the plain
 * adapter's (OidcGrantsSql).
 */
export const layer = (filename: string) =>
  Layer.scoped(
    OidcGrants,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const plain = yield* OidcGrantsSql.make
      const reader = yield* connection(filename, "reading")
      const writer = yield* connection(filename, "writing")
      const statement = grantStatements(sql)
      const presented = prepared(reader, statement.presented)
      const claim = prepared(writer, statement.claim)
      const insertToken = prepared(writer, statement.insertToken)
      const touch = prepared(writer, statement.touch)
      const rotateNow = writer.transaction((digest: string, successor: GrantToken, now: number): boolean => {
        if (claim.all(now, digest, successor.grant_id).length === 0) return false
        insertToken.run(...tokenValues(successor))
        touch.run(now, successor.expires_at.epochMillis, successor.grant_id)
        return true
      })

      return OidcGrants.of({
        ...plain,
        presented: (digest) =>
          ownOrPlain(sql, "reading", plain.presented(digest), () =>
            attempt(() => presentedOfRows(presented.all(digest)))
          ),
        rotate: (digest, successor, now) =>
          ownOrPlain(sql, "writing", plain.rotate(digest, successor, now), () =>
            attempt(() => Effect.succeed(rotateNow.immediate(digest, successor, now.epochMillis)))
          )
      })
    })
  )
