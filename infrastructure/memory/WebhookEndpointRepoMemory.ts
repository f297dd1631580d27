import { Effect, Layer } from "effect"
import { type StoredWebhookEndpoint, WebhookEndpointRepo } from "../../application/ports/WebhookEndpoints.js"

/** Stored endpoints in an array, for tests and throwaway runs (a CLI in another process never sees them). */
export const make = Effect.sync(() => {
  let rows: ReadonlyArray<StoredWebhookEndpoint> = []
  return WebhookEndpointRepo.of({
    all: Effect.sync(() =>
      [...rows].sort((a, b) => a.created_at.epochMillis - b.created_at.epochMillis || a.id.localeCompare(b.id))
    ),
    add: (endpoint) =>
      Effect.sync(() => {
        if (rows.some((row) => row.url === endpoint.url || row.id === endpoint.id)) return false
        rows = [...rows, endpoint]
        return true
      }),
    remove: (id) =>
      Effect.sync(() => {
        const before = rows.length
        rows = rows.filter((row) => row.id !== id)
        return rows.length < before
      })
  })
})

export const layer = Layer.effect(WebhookEndpointRepo, make)
