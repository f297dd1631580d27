import { Context, type DateTime, type Effect } from "effect"
import type { Subscription, WebhookEndpoint } from "../../domain/Webhook.js"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/**
 * The endpoints messages go to now: those of WEBHOOKS and those stored by `portcullis webhook
 * add`. Read on every audit entry, so an adapter answers from memory.
 */
export class WebhookEndpoints extends Context.Tag("app/WebhookEndpoints")<
  WebhookEndpoints,
  { readonly list: Effect.Effect<ReadonlyArray<WebhookEndpoint>> }
>() {}

/** An endpoint as `portcullis webhook add` stores it: its secret sealed (Cryptography.seal). */
export interface StoredWebhookEndpoint {
  readonly id: string
  readonly url: string
  readonly sealed_secret: string
  readonly events: Subscription
  readonly created_at: DateTime.Utc
}

/** The endpoints operators added with the CLI, kept in the database with the outbox. */
export class WebhookEndpointRepo extends Context.Tag("app/WebhookEndpointRepo")<
  WebhookEndpointRepo,
  {
    /** Every stored endpoint, oldest first. */
    readonly all: Effect.Effect<ReadonlyArray<StoredWebhookEndpoint>, StoreUnavailableError>
    /** Stores the endpoint; false, and nothing stored, when one with the same URL is there already. */
    readonly add: (endpoint: StoredWebhookEndpoint) => Effect.Effect<boolean, StoreUnavailableError>
    /** Removes the endpoint; false when there was none with this id. */
    readonly remove: (id: string) => Effect.Effect<boolean, StoreUnavailableError>
  }
>() {}
