import { DateTime, Effect } from "effect"
import type { AuthEvent, AuthEventName } from "../domain/Events.js"
import { eventMessage, payloadBody, wants } from "../domain/Webhook.js"
import { Cryptography } from "./ports/Cryptography.js"
import { Outbox } from "./ports/Outbox.js"
import { Transaction } from "./ports/Transaction.js"
import { WebhookEndpoints } from "./ports/WebhookEndpoints.js"

/**
 * Events that leave the process (docs/operating.md, "Webhooks"): `publish` writes one outbox message
 * for each endpoint subscribed to the event's type. A use case calls it inside the transaction of
 * the change it reports (Transaction), so that the message exists if and only if the change
 * committed; WebhookDelivery sends it.
 */
export class Webhooks extends Effect.Service<Webhooks>()("app/Webhooks", {
  effect: Effect.gen(function* () {
    const outbox = yield* Outbox
    const endpoints = yield* WebhookEndpoints
    const crypto = yield* Cryptography
    const tx = yield* Transaction

    /** Whether any endpoint is sent events of `type`: when none is, nothing is written. */
    const subscribed = (type: string) =>
      Effect.map(endpoints.list, (configured) => configured.some((endpoint) => wants(endpoint.events, type)))

    /**
     * Messages of `type` about `userId` (null: about nobody), `data` as the receivers get it: ids
     * and public fields only, never a secret, token or password.
     */
    const publish = (type: string, userId: string | null, data: Readonly<Record<string, unknown>>, at: DateTime.Utc) =>
      Effect.gen(function* () {
        const receivers = (yield* endpoints.list).filter((endpoint) => wants(endpoint.events, type))
        if (receivers.length === 0) return
        const body = payloadBody({ type, timestamp: DateTime.formatIso(at), data })
        const messages = yield* Effect.forEach(receivers, (endpoint) =>
          Effect.map(crypto.randomId, (id) => ({
            id: `msg_${id}`,
            endpoint: endpoint.id,
            user_id: userId,
            type,
            body,
            created_at: at
          }))
        )
        yield* outbox.add(messages)
      })

    /**
     * One of the spec's events, as receivers are told of it (domain/Webhook.ts `eventMessage`), now;
     * nothing is built when no endpoint subscribes to it.
     */
    const publishEvent = (event: AuthEvent) =>
      Effect.flatMap(subscribed(event._tag), (wanted) =>
        wanted
          ? Effect.flatMap(DateTime.now, (now) => {
              const { type, user_id, data } = eventMessage(event)
              return publish(type, user_id, data, now)
            })
          : Effect.void
      )

    /**
     * `change`, and the event it makes: when an endpoint subscribes to the event's type, both in
     * one transaction (an event exists if and only if its change committed); else the change as
     * it is. The in-process handlers (Events) are the use case's to call, after the commit.
     */
    const committedWith = <A, E, R>(
      type: AuthEventName,
      change: Effect.Effect<A, E, R>,
      eventOf: (value: A) => AuthEvent | undefined
    ) =>
      Effect.flatMap(subscribed(type), (wanted) =>
        wanted
          ? tx.transaction(
              Effect.tap(change, (value) => {
                const event = eventOf(value)
                return event === undefined ? Effect.void : publishEvent(event)
              })
            )
          : change
      )

    return { subscribed, publish, publishEvent, committedWith } as const
  })
}) {}
