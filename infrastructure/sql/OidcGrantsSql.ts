import * as SqlClient from "@effect/sql/SqlClient"
import { type DateTime, Effect, Layer, Option, Schema } from "effect"
import { OidcGrants } from "../../application/ports/OidcGrants.js"
import type { Grant, GrantToken } from "../../domain/oidc/Grant.js"
import { countOf, SqlInt, SqlMillis } from "./columns.js"
import { unavailable } from "./failures.js"

const Texts = Schema.parseJson(Schema.Array(Schema.String))
const grantFields = {
  grant_id: Schema.String,
  client_id: Schema.String,
  user_id: Schema.String,
  scopes: Texts,
  resources: Texts,
  auth_time: SqlInt,
  amr: Texts,
  created_at: SqlMillis,
  last_used_at: SqlMillis,
  expires_at: SqlMillis,
  revoked_at: Schema.NullOr(SqlMillis)
}
const decodeGrants = Schema.decodeUnknown(Schema.Array(Schema.Struct(grantFields)))
const decodePresented = Schema.decodeUnknown(
  Schema.Array(
    Schema.Struct({
      ...grantFields,
      token_digest: Schema.String,
      token_issued_at: SqlMillis,
      token_expires_at: SqlMillis,
      token_rotated_at: Schema.NullOr(SqlMillis)
    })
  )
)

const grantColumns = `g.grant_id, g.client_id, g.user_id, g.scopes, g.resources, g.auth_time, g.amr, g.created_at, g.last_used_at,
  g.expires_at, g.revoked_at`

/**
 * The reads of the token endpoint and of userinfo: a presented refresh token with its grant, and a
 * grant by id. The plain adapter runs them through the client, the fast ones (fast/OidcGrantsSqlite,
 * fast/OidcGrantsPgReader) on SQLite's reading connection or named on PostgreSQL.
 */
export const readStatements = (sql: SqlClient.SqlClient) => {
  const columns = sql.literal(grantColumns)
  return {
    presented: (digest: string) =>
      sql`SELECT ${columns}, t.digest AS token_digest, t.issued_at AS token_issued_at,
          t.expires_at AS token_expires_at, t.rotated_at AS token_rotated_at
        FROM oidc_refresh_tokens t JOIN oidc_grants g ON g.grant_id = t.grant_id WHERE t.digest = ${digest}`,
    find: (grantId: string) => sql`SELECT ${columns} FROM oidc_grants g WHERE g.grant_id = ${grantId}`
  }
}

/** The token and its grant the rows of `presented` hold, if any. */
export const presentedOfRows = (rows: unknown) =>
  Effect.map(decodePresented(rows), (decoded) =>
    Option.map(Option.fromNullable(decoded[0]), (row) => {
      const { token_digest, token_issued_at, token_expires_at, token_rotated_at, ...grant } = row
      return {
        grant,
        token: {
          digest: token_digest,
          grant_id: grant.grant_id,
          issued_at: token_issued_at,
          expires_at: token_expires_at,
          rotated_at: token_rotated_at
        }
      }
    })
  )

/** The grant the rows of `find` hold, if any. */
export const grantOfRows = (rows: unknown) => Effect.map(decodeGrants(rows), (grants) => Option.fromNullable(grants[0]))

/**
 * A rotation's three statements over plain values, one parameter each: the claim, one UPDATE that
 * only an unrotated token of a live grant passes; the successor stored; the grant touched. The
 * plain adapter runs them in a transaction of the client, the fast one
 * (fast/OidcGrantsSqlite) prepares them once on a connection of its own.
 */
export const rotationStatements = (sql: SqlClient.SqlClient) => ({
  claim: (rotatedAt: number, digest: string, grantId: string) =>
    sql<{ readonly digest: string }>`UPDATE oidc_refresh_tokens
      SET rotated_at = ${rotatedAt}
      WHERE digest = ${digest} AND rotated_at IS NULL AND grant_id IN (
        SELECT grant_id FROM oidc_grants WHERE grant_id = ${grantId} AND revoked_at IS NULL)
      RETURNING digest`,
  insert: (digest: string, grantId: string, issuedAt: number, expiresAt: number, rotatedAt: number | null) =>
    sql`INSERT INTO oidc_refresh_tokens (digest, grant_id, issued_at, expires_at, rotated_at)
      VALUES (${digest}, ${grantId}, ${issuedAt}, ${expiresAt}, ${rotatedAt})`,
  touch: (lastUsedAt: number, expiresAt: number, grantId: string) =>
    sql`UPDATE oidc_grants SET last_used_at = ${lastUsedAt}, expires_at = ${expiresAt} WHERE grant_id = ${grantId}`
})

/**
 * A code's redemption's statements over plain values, one parameter each: the code claimed for the
 * grant it starts, one UPDATE that only an unredeemed code passes; the grant stored (its first
 * refresh token is a rotation's `insert`). The plain adapter runs them in a transaction of the
 * client, the fast one (fast/OidcGrantsSqlite) prepares them once on a connection of its own.
 */
export const redemptionStatements = (sql: SqlClient.SqlClient) => ({
  claim: (redeemedAt: number, grantId: string, digest: string) =>
    sql<{ readonly digest: string }>`UPDATE oidc_codes SET redeemed_at = ${redeemedAt}, family_id = ${grantId}
      WHERE digest = ${digest} AND redeemed_at IS NULL RETURNING digest`,
  grant: (
    grantId: string,
    clientId: string,
    userId: string,
    scopes: string,
    resources: string,
    authTime: number,
    amr: string,
    createdAt: number,
    lastUsedAt: number,
    expiresAt: number,
    revokedAt: number | null
  ) =>
    sql`INSERT INTO oidc_grants (grant_id, client_id, user_id, scopes, resources, auth_time, amr, created_at, last_used_at,
        expires_at, revoked_at)
      VALUES (${grantId}, ${clientId}, ${userId}, ${scopes}, ${resources}, ${authTime}, ${amr}, ${createdAt},
        ${lastUsedAt}, ${expiresAt}, ${revokedAt})`
})

/** The values of a grant's row, in the order of `redemptionStatements(…).grant`. */
export const grantValues = (grant: Grant) =>
  [
    grant.grant_id,
    grant.client_id,
    grant.user_id,
    JSON.stringify(grant.scopes),
    JSON.stringify(grant.resources),
    grant.auth_time,
    JSON.stringify(grant.amr),
    grant.created_at.epochMillis,
    grant.last_used_at.epochMillis,
    grant.expires_at.epochMillis,
    grant.revoked_at?.epochMillis ?? null
  ] as const

/** The values of a code's claim by the grant it starts, redeemed when the grant is created. */
export const claimValues = (code: string, grant: Grant) => [grant.created_at.epochMillis, grant.grant_id, code] as const

export const tokenValues = (token: GrantToken) =>
  [
    token.digest,
    token.grant_id,
    token.issued_at.epochMillis,
    token.expires_at.epochMillis,
    token.rotated_at?.epochMillis ?? null
  ] as const

/** The values of a rotation's three statements, in their order. */
export const rotationValues = (digest: string, successor: GrantToken, now: DateTime.Utc) =>
  [
    [now.epochMillis, digest, successor.grant_id],
    tokenValues(successor),
    [now.epochMillis, successor.expires_at.epochMillis, successor.grant_id]
  ] as const

/**
 * Grants in `oidc_grants`, their refresh tokens in `oidc_refresh_tokens` by digest. A rotation
 * claims the token with one UPDATE that only an unrotated token of a live grant passes, in the
 * transaction that stores its successor.
 */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.literal(grantColumns)

  const rotation = rotationStatements(sql)
  const redemption = redemptionStatements(sql)
  const reads = readStatements(sql)
  /** The grant's row and its first token's, if any: inside a transaction of the caller's. */
  const stored = (grant: Grant, token: Option.Option<GrantToken>) =>
    redemption.grant(...grantValues(grant)).pipe(
      Effect.zipRight(
        Option.match(token, {
          onNone: () => Effect.void,
          onSome: (first) => Effect.asVoid(rotation.insert(...tokenValues(first)))
        })
      )
    )

  return OidcGrants.of({
    start: (grant: Grant, token) => sql.withTransaction(stored(grant, token)).pipe(Effect.asVoid, unavailable),

    startFromCode: (code, grant, token) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            if ((yield* redemption.claim(...claimValues(code, grant))).length === 0) return false
            yield* stored(grant, token)
            return true
          })
        )
        .pipe(unavailable),

    presented: (digest) => reads.presented(digest).pipe(Effect.flatMap(presentedOfRows), unavailable),

    rotate: (digest, successor, now) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            const [claimed, stored, touched] = rotationValues(digest, successor, now)
            if ((yield* rotation.claim(...claimed)).length === 0) return false
            yield* rotation.insert(...stored)
            yield* rotation.touch(...touched)
            return true
          })
        )
        .pipe(unavailable),

    find: (grantId) => reads.find(grantId).pipe(Effect.flatMap(grantOfRows), unavailable),

    revoke: (grantId, now) =>
      sql<{ readonly grant_id: string }>`UPDATE oidc_grants SET revoked_at = ${now.epochMillis}
        WHERE grant_id = ${grantId} AND revoked_at IS NULL RETURNING grant_id`.pipe(
        Effect.map((rows) => rows.length > 0),
        unavailable
      ),

    revokeOfUser: (userId, now, clientId) =>
      sql<{ readonly grant_id: string }>`UPDATE oidc_grants SET revoked_at = ${now.epochMillis}
        WHERE user_id = ${userId} AND revoked_at IS NULL
          ${clientId === undefined ? sql`` : sql`AND client_id = ${clientId}`}
        RETURNING grant_id`.pipe(
        Effect.map((rows) => rows.length),
        unavailable
      ),

    liveOfUser: (userId, now) =>
      sql`SELECT ${columns} FROM oidc_grants g
        WHERE g.user_id = ${userId} AND g.revoked_at IS NULL AND g.expires_at > ${now.epochMillis}
        ORDER BY g.last_used_at DESC, g.grant_id DESC`.pipe(Effect.flatMap(decodeGrants), unavailable),

    deleteEnded: (before, limit) =>
      sql`DELETE FROM oidc_grants WHERE grant_id IN (
          SELECT grant_id FROM oidc_grants
          WHERE (revoked_at IS NOT NULL AND revoked_at < ${before.epochMillis}) OR expires_at < ${before.epochMillis}
          LIMIT ${limit})
        RETURNING grant_id`.pipe(
        Effect.map((rows) => rows.length),
        unavailable
      ),
    countEnded: (before) =>
      sql`SELECT COUNT(*) AS n FROM oidc_grants
          WHERE (revoked_at IS NOT NULL AND revoked_at < ${before.epochMillis}) OR expires_at < ${before.epochMillis}`.pipe(
        Effect.flatMap(countOf),
        unavailable
      )
  })
})

export const layer = Layer.effect(OidcGrants, make)
