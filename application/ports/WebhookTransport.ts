import { Context, type DateTime, type Effect } from "effect"
import type { DeliveryOutcome, WebhookEndpoint } from "../../domain/Webhook.js"

/** A message as it goes out: its id and body, signed with the time of the try. */
export interface OutgoingMessage {
  readonly id: string
  readonly body: string
  readonly timestamp: DateTime.Utc
}

/**
 * Sends one message to one endpoint, signed to the Standard Webhooks specification, and says
 * what came of it. Never fails: every way a try can go wrong is a Failed outcome with its reason.
 */
export class WebhookTransport extends Context.Tag("app/WebhookTransport")<
  WebhookTransport,
  {
    readonly send: (endpoint: WebhookEndpoint, message: OutgoingMessage) => Effect.Effect<DeliveryOutcome>
    /**
     * Why every try to `url` would be refused before it connects (its host is a private address,
     * or resolves to one, and the deployment does not allow those), or nothing: what an operator
     * adding it should hear at once rather than from dead messages later.
     */
    readonly refusal: (url: string) => Effect.Effect<string | undefined>
  }
>() {}
