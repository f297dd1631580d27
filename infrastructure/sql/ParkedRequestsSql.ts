import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, Option, Schema } from "effect"
import { ParkedRequests } from "../../application/ports/ParkedRequests.js"
import { countOf, SqlMillis } from "./columns.js"
import { unavailable } from "./failures.js"

/** The accepted request as the domain states it, kept as JSON text. */
const Request = Schema.parseJson(
  Schema.Struct({
    client_id: Schema.String,
    redirect_uri: Schema.String,
    scopes: Schema.Array(Schema.String),
    state: Schema.NullOr(Schema.String),
    nonce: Schema.NullOr(Schema.String),
    code_challenge: Schema.String,
    prompt: Schema.Array(Schema.String),
    max_age: Schema.NullOr(Schema.Number),
    login_hint: Schema.NullOr(Schema.String),
    // Parked before resources existed: none.
    resources: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] })
  })
)
const encodeRequest = Schema.encodeSync(Request)

const decodeRows = Schema.decodeUnknown(
  Schema.Array(Schema.Struct({ digest: Schema.String, request: Request, parked_at: SqlMillis, expires_at: SqlMillis }))
)

/** Parked authorization requests in `oidc_requests`, found by the digest of their id. */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  return ParkedRequests.of({
    park: (parked) =>
      sql`INSERT INTO oidc_requests (digest, client_id, request, parked_at, expires_at)
        VALUES (${parked.digest}, ${parked.request.client_id}, ${encodeRequest(parked.request)},
          ${parked.parked_at.epochMillis}, ${parked.expires_at.epochMillis})`.pipe(Effect.asVoid, unavailable),

    find: (digest, now) =>
      sql`SELECT digest, request, parked_at, expires_at FROM oidc_requests
        WHERE digest = ${digest} AND expires_at > ${now.epochMillis}`.pipe(
        Effect.flatMap(decodeRows),
        Effect.map((rows) => Option.fromNullable(rows[0])),
        unavailable
      ),

    remove: (digest) =>
      sql<{ readonly digest: string }>`DELETE FROM oidc_requests WHERE digest = ${digest} RETURNING digest`.pipe(
        Effect.map((rows) => rows.length > 0),
        unavailable
      ),

    deleteExpired: (before, limit) =>
      sql`DELETE FROM oidc_requests WHERE digest IN (
          SELECT digest FROM oidc_requests WHERE expires_at < ${before.epochMillis} LIMIT ${limit})
        RETURNING digest`.pipe(
        Effect.map((rows) => rows.length),
        unavailable
      ),
    countExpired: (before) =>
      sql`SELECT COUNT(*) AS n FROM oidc_requests WHERE expires_at < ${before.epochMillis}`.pipe(
        Effect.flatMap(countOf),
        unavailable
      )
  })
})

export const layer = Layer.effect(ParkedRequests, make)
