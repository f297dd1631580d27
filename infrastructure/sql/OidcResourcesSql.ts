import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, Option, Schema } from "effect"
import { OidcResources, type StoredResource } from "../../application/ports/OidcResources.js"
import { SqlMillis } from "./columns.js"
import { isUniqueViolation, unavailable } from "./failures.js"

const Row = Schema.Struct({
  uri: Schema.String,
  scopes: Schema.parseJson(Schema.Array(Schema.String)),
  introspecting_client: Schema.NullOr(Schema.String),
  created_at: SqlMillis
})
const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

/** The provider's resources in `oidc_resources`, by normalised URI; scopes as JSON text. */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const columns = sql`uri, scopes, introspecting_client, created_at`

  return OidcResources.of({
    add: (resource: StoredResource) =>
      sql`INSERT INTO oidc_resources (uri, scopes, introspecting_client, created_at)
        VALUES (${resource.uri}, ${JSON.stringify(resource.scopes)}, ${resource.introspecting_client},
          ${resource.created_at.epochMillis})`.pipe(
        Effect.as(true),
        Effect.catchIf(isUniqueViolation, () => Effect.succeed(false)),
        unavailable
      ),

    find: (uri) =>
      sql`SELECT ${columns} FROM oidc_resources WHERE uri = ${uri}`.pipe(
        Effect.flatMap(decodeRows),
        Effect.map((rows) => Option.fromNullable(rows[0])),
        unavailable
      ),

    all: sql`SELECT ${columns} FROM oidc_resources ORDER BY created_at, uri`.pipe(
      Effect.flatMap(decodeRows),
      unavailable
    ),

    remove: (uri) =>
      sql<{ readonly uri: string }>`DELETE FROM oidc_resources WHERE uri = ${uri} RETURNING uri`.pipe(
        Effect.map((rows) => rows.length > 0),
        unavailable
      )
  })
})

export const layer = Layer.effect(OidcResources, make)
