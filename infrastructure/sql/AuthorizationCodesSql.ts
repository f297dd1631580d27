import * as SqlClient from "@effect/sql/SqlClient"
import { type DateTime, Effect, Layer, Option, Schema } from "effect"
import { AuthorizationCodes } from "../../application/ports/AuthorizationCodes.js"
import type { StoredCode } from "../../domain/oidc/Code.js"
import { countOf, SqlInt, SqlMillis } from "./columns.js"
import { unavailable } from "./failures.js"

const Texts = Schema.parseJson(Schema.Array(Schema.String))

const Row = Schema.Struct({
  digest: Schema.String,
  client_id: Schema.String,
  user_id: Schema.String,
  redirect_uri: Schema.String,
  code_challenge: Schema.String,
  scopes: Texts,
  resources: Texts,
  nonce: Schema.NullOr(Schema.String),
  auth_time: SqlInt,
  amr: Texts,
  expires_at: SqlMillis,
  redeemed_at: Schema.NullOr(SqlMillis),
  family_id: Schema.NullOr(Schema.String)
})
const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

/**
 * The read of a presented code, every redemption's first: the plain adapter runs it through the
 * client, the fast ones (fast/AuthorizationCodes*Reader) run it on SQLite's reading connection or named on PostgreSQL.
 */
export const readStatements = (sql: SqlClient.SqlClient) => ({
  find: (digest: string) =>
    sql`SELECT digest, client_id, user_id, redirect_uri, code_challenge, scopes, resources, nonce, auth_time, amr,
        expires_at, redeemed_at, family_id
      FROM oidc_codes WHERE digest = ${digest}`
})

/** The code the rows of `find` hold, if any. */
export const codeOfRows = (rows: unknown) => Effect.map(decodeRows(rows), (codes) => Option.fromNullable(codes[0]))

/**
 * Authorization codes in `oidc_codes`, SQLite or PostgreSQL alike. Their redemption is the grant's
 * (OidcGrantsSql's `startFromCode`: one UPDATE that only an unredeemed code passes records the grant
 * it starts); a replay, which can only pass once that is committed (the row's lock on PostgreSQL,
 * the one writer on SQLite), reads the grant from the same row.
 */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const reads = readStatements(sql)

  return AuthorizationCodes.of({
    add: (code: StoredCode) =>
      sql`INSERT INTO oidc_codes (digest, client_id, user_id, redirect_uri, code_challenge, scopes, resources,
          nonce, auth_time, amr, expires_at, redeemed_at, family_id)
        VALUES (${code.digest}, ${code.client_id}, ${code.user_id}, ${code.redirect_uri}, ${code.code_challenge},
          ${JSON.stringify(code.scopes)}, ${JSON.stringify(code.resources)}, ${code.nonce}, ${code.auth_time}, ${JSON.stringify(code.amr)},
          ${code.expires_at.epochMillis}, ${code.redeemed_at?.epochMillis ?? null}, ${code.family_id})`.pipe(
        Effect.asVoid,
        unavailable
      ),

    find: (digest) => reads.find(digest).pipe(Effect.flatMap(codeOfRows), unavailable),

    markReplayed: (digest, now) =>
      sql<{ readonly family_id: string | null }>`UPDATE oidc_codes SET replayed_at = ${now.epochMillis}
        WHERE digest = ${digest} AND redeemed_at IS NOT NULL RETURNING family_id`.pipe(
        Effect.map((rows) => Option.fromNullable(rows[0]?.family_id)),
        unavailable
      ),

    deleteExpired: (before: DateTime.Utc, limit) =>
      sql`DELETE FROM oidc_codes WHERE digest IN (
          SELECT digest FROM oidc_codes WHERE expires_at < ${before.epochMillis} LIMIT ${limit})
        RETURNING digest`.pipe(
        Effect.map((rows) => rows.length),
        unavailable
      ),
    countExpired: (before: DateTime.Utc) =>
      sql`SELECT COUNT(*) AS n FROM oidc_codes WHERE expires_at < ${before.epochMillis}`.pipe(
        Effect.flatMap(countOf),
        unavailable
      )
  })
})

export const layer = Layer.effect(AuthorizationCodes, make)
