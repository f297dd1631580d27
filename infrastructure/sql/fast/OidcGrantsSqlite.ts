import * as SqlClient from "@effect/sql/SqlClient"
import type { DateTime } from "effect"
import { Effect, Layer, Option } from "effect"
import { OidcGrants } from "../../../application/ports/OidcGrants.js"
import type { Grant, GrantToken } from "../../../domain/oidc/Grant.js"
import { unavailable } from "../failures.js"
import * as OidcGrantsSql from "../OidcGrantsSql.js"
import { connection, ReadingConnection } from "./connections.js"
import { groupCommits } from "./groupCommit.js"
import { prepared } from "./prepared.js"
import { readingOn, readOutsideTransactions } from "./reading.js"
import { unlessInTransaction } from "./transactions.js"

interface GrantRotation {
  readonly digest: string
  readonly successor: GrantToken
  readonly now: DateTime.Utc
}

interface CodeRedemption {
  readonly code: string
  readonly grant: Grant
  readonly token: Option.Option<GrantToken>
}

/**
 * OidcGrants on a SQLite file, outside the client's connection:
 * - its rotation (every refresh grant's write) committed on a writing connection, the rotations
 *   that arrive together in one transaction (groupCommit.ts: each in a savepoint, each answered
 *   after the COMMIT, with synchronous=FULL), as the first-party refresh's rotation is
 *   (RefreshTokenRotationSqlite);
 * - a code's redemption (every authorization code's write: the code claimed, the grant and its
 *   first token stored) committed the same way, on the same connection;
 * - its reads of a presented refresh token and of a grant (every refresh grant's, every userinfo
 *   request's) on the file's reading connection (reading.ts, connections.ts): a grant revoked is
 *   read as such by the next request.
 * The statements and everything else are the plain adapter's (OidcGrantsSql); inside a
 * transaction of the client, its calls too.
 */
export const layer = (filename: string) =>
  Layer.scoped(
    OidcGrants,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const plain = yield* OidcGrantsSql.make
      const db = yield* connection(filename, "writing")
      const reader = yield* ReadingConnection
      const reads = OidcGrantsSql.readStatements(sql)
      const presented = readingOn(reader, reads.presented)
      const find = readingOn(reader, reads.find)
      const statement = OidcGrantsSql.rotationStatements(sql)
      const claim = prepared(db, statement.claim)
      const insert = prepared(db, statement.insert)
      const touch = prepared(db, statement.touch)
      const committed = groupCommits(sql.reserve, db, ({ digest, successor, now }: GrantRotation): boolean => {
        const [claimed, stored, touched] = OidcGrantsSql.rotationValues(digest, successor, now)
        if (claim.all(...claimed).length === 0) return false
        insert.run(...stored)
        touch.run(...touched)
        return true
      })
      const redemption = OidcGrantsSql.redemptionStatements(sql)
      const claimCode = prepared(db, redemption.claim)
      const insertGrant = prepared(db, redemption.grant)
      const redeemed = groupCommits(sql.reserve, db, ({ code, grant, token }: CodeRedemption): boolean => {
        if (claimCode.all(...OidcGrantsSql.claimValues(code, grant)).length === 0) return false
        insertGrant.run(...OidcGrantsSql.grantValues(grant))
        if (Option.isSome(token)) insert.run(...OidcGrantsSql.tokenValues(token.value))
        return true
      })
      return OidcGrants.of({
        ...plain,
        presented: readOutsideTransactions(plain.presented, presented, OidcGrantsSql.presentedOfRows),
        find: readOutsideTransactions(plain.find, find, OidcGrantsSql.grantOfRows),
        rotate: (digest, successor, now) =>
          unlessInTransaction(plain.rotate(digest, successor, now), () =>
            unavailable(committed({ digest, successor, now }))
          ),
        startFromCode: (code, grant, token) =>
          unlessInTransaction(plain.startFromCode(code, grant, token), () =>
            unavailable(redeemed({ code, grant, token }))
          )
      })
    })
  )
