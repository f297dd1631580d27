import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, Schema } from "effect"
import { WebhookEndpointRepo } from "../../application/ports/WebhookEndpoints.js"
import { SqlMillis } from "./columns.js"
import { isUniqueViolation, unavailable } from "./failures.js"

const Events = Schema.parseJson(Schema.Union(Schema.Literal("*"), Schema.Array(Schema.String)))

const decodeRows = Schema.decodeUnknown(
  Schema.Array(
    Schema.Struct({
      id: Schema.String,
      url: Schema.String,
      sealed_secret: Schema.String,
      events: Events,
      created_at: SqlMillis
    })
  )
)

/** The endpoints `portcullis webhook add` stored, in `webhook_endpoints`; the unique URL refuses a second of one. */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  return WebhookEndpointRepo.of({
    all: sql`SELECT id, url, sealed_secret, events, created_at FROM webhook_endpoints ORDER BY created_at, id`.pipe(
      Effect.flatMap(decodeRows),
      unavailable
    ),

    add: (endpoint) =>
      sql`INSERT INTO webhook_endpoints (id, url, sealed_secret, events, created_at)
        VALUES (${endpoint.id}, ${endpoint.url}, ${endpoint.sealed_secret}, ${JSON.stringify(endpoint.events)},
          ${endpoint.created_at.epochMillis})`.pipe(
        Effect.as(true),
        Effect.catchIf(isUniqueViolation, () => Effect.succeed(false)),
        unavailable
      ),

    remove: (id) =>
      sql<{ readonly id: string }>`DELETE FROM webhook_endpoints WHERE id = ${id} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        unavailable
      )
  })
})

export const layer = Layer.effect(WebhookEndpointRepo, make)
