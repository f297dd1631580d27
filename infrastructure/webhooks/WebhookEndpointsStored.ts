import { Duration, Effect, Layer, Option, Redacted, Ref } from "effect"
import { Cryptography } from "../../application/ports/Cryptography.js"
import {
  type StoredWebhookEndpoint,
  WebhookEndpointRepo,
  WebhookEndpoints
} from "../../application/ports/WebhookEndpoints.js"
import type { WebhookEndpoint } from "../../domain/Webhook.js"

/** How often a worker reads the stored endpoints again: `webhook add` and `remove` reach every worker within it. */
export const REFRESH = Duration.seconds(5)

/**
 * The endpoints of WEBHOOKS and those stored by the CLI, held in memory: `list` runs on every
 * audit entry, so it never waits for the database. The stored ones are read at start and every
 * `every` after; a read that fails keeps the last list (and says so), so that a database
 * unreachable for a moment never drops an endpoint. A stored secret that no longer opens (the
 * SECRET_KEY changed) leaves its endpoint out, with a warning, until it is added again.
 */
export const make = (configured: ReadonlyArray<WebhookEndpoint>, every: Duration.DurationInput = REFRESH) =>
  Effect.gen(function* () {
    const repo = yield* WebhookEndpointRepo
    const crypto = yield* Cryptography
    const current = yield* Ref.make(configured)
    const unopened = yield* Ref.make(new Set<string>())

    const opened = (rows: ReadonlyArray<StoredWebhookEndpoint>) =>
      Effect.gen(function* () {
        const endpoints: Array<WebhookEndpoint> = []
        const failed = new Set<string>()
        for (const row of rows) {
          Option.match(crypto.open(row.sealed_secret), {
            onNone: () => failed.add(row.id),
            onSome: (secret) =>
              endpoints.push({ id: row.id, url: row.url, secret: Redacted.make(secret), events: row.events })
          })
        }
        const known = yield* Ref.getAndSet(unopened, failed)
        const fresh = [...failed].filter((id) => !known.has(id))
        if (fresh.length > 0) {
          yield* Effect.logWarning(
            "webhook endpoints left out: their secrets do not open under this SECRET_KEY; remove and add them again",
            { endpoints: fresh }
          )
        }
        return endpoints
      })

    const refresh = repo.all.pipe(
      Effect.flatMap(opened),
      Effect.flatMap((stored) => Ref.set(current, [...configured, ...stored])),
      Effect.catchTag("StoreUnavailableError", (error) =>
        Effect.logWarning("stored webhook endpoints not read; the last list stands", error)
      )
    )

    yield* refresh
    yield* Effect.sleep(every).pipe(Effect.zipRight(refresh), Effect.forever, Effect.forkScoped)
    return WebhookEndpoints.of({ list: Ref.get(current) })
  })

export const layer = (configured: ReadonlyArray<WebhookEndpoint>, every?: Duration.DurationInput) =>
  Layer.scoped(WebhookEndpoints, make(configured, every))
