import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, Option, Schema } from "effect"
import { Consents } from "../../application/ports/Consents.js"
import { SqlMillis } from "./columns.js"
import { unavailable } from "./failures.js"

const Row = Schema.Struct({
  user_id: Schema.String,
  client_id: Schema.String,
  scopes: Schema.parseJson(Schema.Array(Schema.String)),
  granted_at: SqlMillis
})
const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

/**
 * Consents in `oidc_consents`, keyed by user and client. A grant inserts the row or, when it is
 * there, locks it and adds its scopes, in one transaction: two grants racing for one user and
 * client keep both's scopes, and exactly one of them is the first.
 */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const find = (userId: string, clientId: string) =>
    sql`SELECT user_id, client_id, scopes, granted_at FROM oidc_consents
      WHERE user_id = ${userId} AND client_id = ${clientId}`.pipe(
      Effect.flatMap(decodeRows),
      Effect.map((rows) => Option.fromNullable(rows[0]))
    )

  return Consents.of({
    find: (userId, clientId) => unavailable(find(userId, clientId)),

    grant: (userId, clientId, scopes, now) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            // A first grant inserts; a racing one waits on the row, then adds its scopes to it.
            const inserted = yield* sql<{ readonly client_id: string }>`INSERT INTO oidc_consents
                (user_id, client_id, scopes, granted_at)
              VALUES (${userId}, ${clientId}, ${JSON.stringify([...new Set(scopes)])}, ${now.epochMillis})
              ON CONFLICT (user_id, client_id) DO NOTHING RETURNING client_id`
            if (inserted.length > 0) return true
            const held = yield* sql.onDialectOrElse({
              pg: () =>
                sql`SELECT user_id, client_id, scopes, granted_at FROM oidc_consents
                  WHERE user_id = ${userId} AND client_id = ${clientId} FOR UPDATE`.pipe(Effect.flatMap(decodeRows)),
              orElse: () => Effect.map(find(userId, clientId), Option.toArray)
            })
            const union = JSON.stringify([...new Set([...(held[0]?.scopes ?? []), ...scopes])])
            yield* sql`UPDATE oidc_consents SET scopes = ${union} WHERE user_id = ${userId} AND client_id = ${clientId}`
            return false
          })
        )
        .pipe(unavailable),

    withdraw: (userId, clientId) =>
      sql<{ readonly client_id: string }>`DELETE FROM oidc_consents
        WHERE user_id = ${userId} AND client_id = ${clientId} RETURNING client_id`.pipe(
        Effect.map((rows) => rows.length > 0),
        unavailable
      ),

    ofUser: (userId) =>
      sql`SELECT user_id, client_id, scopes, granted_at FROM oidc_consents WHERE user_id = ${userId}
        ORDER BY granted_at, client_id`.pipe(Effect.flatMap(decodeRows), unavailable)
  })
})

export const layer = Layer.effect(Consents, make)
