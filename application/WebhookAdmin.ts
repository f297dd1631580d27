import { Data, DateTime, Effect, Either, Option } from "effect"
import type { Subscription } from "../domain/Webhook.js"
import { checkEndpoint, type DeliveryOutcome, payloadBody } from "../domain/Webhook.js"
import { Audit } from "./Audit.js"
import { Cryptography } from "./ports/Cryptography.js"
import { Outbox } from "./ports/Outbox.js"
import { Transaction } from "./ports/Transaction.js"
import { WebhookEndpointRepo, WebhookEndpoints } from "./ports/WebhookEndpoints.js"
import { WebhookTransport } from "./ports/WebhookTransport.js"

/** Why an operator's request about an endpoint was refused, in a sentence for the terminal. */
export class WebhookAdminRefusal extends Data.TaggedError("WebhookAdminRefusal")<{ readonly reason: string }> {}

/** An endpoint as an operator sees it: never its secret. */
export interface EndpointView {
  readonly id: string
  readonly url: string
  readonly events: Subscription
  /** Where it comes from: the WEBHOOKS setting (changed by editing it) or `webhook add`. */
  readonly source: "setting" | "cli"
  readonly created_at: DateTime.Utc | null
}

/** A new secret in Standard Webhooks' form: `whsec_` and 32 random bytes in base64. */
const secretOf = (randomSecret: string) => {
  const base64 = randomSecret.replaceAll("-", "+").replaceAll("_", "/")
  return `whsec_${base64}${"=".repeat((4 - (base64.length % 4)) % 4)}`
}

/** What the audit log keeps of an endpoint: its id, where it sends (no path or query, which may carry a token), what. */
const auditDetails = (id: string, url: string, events: Subscription) => ({
  endpoint: id,
  origin: new URL(url).origin,
  events: events === "*" ? "*" : events.join(",")
})

/**
 * The operator's side of webhooks (`portcullis webhook …`): endpoints added to the database with
 * their secrets sealed, listed, removed and tried, and dead messages sent again. Adding and
 * removing are audited in the transaction of the change; workers see the change within
 * their refresh of the list (infrastructure/webhooks/WebhookEndpointsStored.ts).
 */
export class WebhookAdmin extends Effect.Service<WebhookAdmin>()("app/WebhookAdmin", {
  effect: Effect.gen(function* () {
    const repo = yield* WebhookEndpointRepo
    const endpoints = yield* WebhookEndpoints
    const crypto = yield* Cryptography
    const transport = yield* WebhookTransport
    const outbox = yield* Outbox
    const audit = yield* Audit
    const tx = yield* Transaction

    const list = Effect.gen(function* () {
      const stored = yield* repo.all
      const storedIds = new Set(stored.map((row) => row.id))
      const configured = (yield* endpoints.list).filter((endpoint) => !storedIds.has(endpoint.id))
      return [
        ...configured.map(
          ({ id, url, events }): EndpointView => ({ id, url, events, source: "setting", created_at: null })
        ),
        ...stored.map(
          ({ id, url, events, created_at }): EndpointView => ({ id, url, events, source: "cli", created_at })
        )
      ]
    })

    /** Stores an endpoint; answers it and its secret (made here unless given), which is shown this once. */
    const add = (request: { readonly url: string; readonly events: Subscription; readonly secret?: string }) =>
      Effect.gen(function* () {
        const secret = request.secret ?? secretOf(yield* crypto.randomSecret)
        const checked = checkEndpoint(request.url, secret, request.events)
        if (Either.isLeft(checked)) return yield* new WebhookAdminRefusal({ reason: `The endpoint ${checked.left}` })
        const { url, events } = checked.right
        if ((yield* list).some((endpoint) => endpoint.url === url)) {
          return yield* new WebhookAdminRefusal({ reason: `An endpoint for ${url} is there already` })
        }
        const endpoint = {
          id: `wh_${(yield* crypto.randomId).replaceAll("-", "")}`,
          url,
          sealed_secret: yield* crypto.seal(secret),
          events,
          created_at: yield* DateTime.now
        }
        yield* tx.transaction(
          Effect.gen(function* () {
            yield* audit.append({
              type: "webhook.endpoint_added",
              user_id: null,
              details: auditDetails(endpoint.id, url, events)
            })
            // The unique URL decides a race of two adds; the loser's audit entry is rolled back.
            if (!(yield* repo.add(endpoint))) {
              return yield* new WebhookAdminRefusal({ reason: `An endpoint for ${url} is there already` })
            }
          })
        )
        const view: EndpointView = { id: endpoint.id, url, events, source: "cli", created_at: endpoint.created_at }
        // Added all the same: the deployment may allow private addresses later, or the name resolve elsewhere.
        return { endpoint: view, secret, refusal: yield* transport.refusal(url) }
      })

    /** The endpoint of this id, from the setting or stored. */
    const named = (id: string) =>
      Effect.flatMap(list, (all) => {
        const found = all.find((endpoint) => endpoint.id === id)
        if (found === undefined) return new WebhookAdminRefusal({ reason: `No webhook endpoint has the id ${id}` })
        return Effect.succeed(found)
      })

    /** Removes a stored endpoint; its messages not yet delivered die at their next try. */
    const remove = (id: string) =>
      Effect.gen(function* () {
        const endpoint = yield* named(id)
        if (endpoint.source === "setting") {
          return yield* new WebhookAdminRefusal({
            reason: `The endpoint ${id} comes from SERVICE_WEBHOOKS: remove it from that setting`
          })
        }
        yield* tx.transaction(
          Effect.gen(function* () {
            yield* audit.append({
              type: "webhook.endpoint_removed",
              user_id: null,
              details: auditDetails(endpoint.id, endpoint.url, endpoint.events)
            })
            if (!(yield* repo.remove(id))) {
              return yield* new WebhookAdminRefusal({ reason: `No webhook endpoint has the id ${id}` })
            }
          })
        )
        return endpoint
      })

    /**
     * One signed message of type `webhook.test` sent to the endpoint now, outside the outbox (it
     * is never tried again), and what came of it.
     */
    const test = (id: string) =>
      Effect.gen(function* () {
        yield* named(id)
        const endpoint = Option.fromNullable((yield* endpoints.list).find((found) => found.id === id))
        if (Option.isNone(endpoint)) {
          return yield* new WebhookAdminRefusal({
            reason: `The endpoint ${id}'s secret does not open under this SECRET_KEY: remove it and add it again`
          })
        }
        const now = yield* DateTime.now
        const outcome: DeliveryOutcome = yield* transport.send(endpoint.value, {
          id: `msg_${yield* crypto.randomId}`,
          body: payloadBody({ type: "webhook.test", timestamp: DateTime.formatIso(now), data: { endpoint: id } }),
          timestamp: now
        })
        return outcome
      })

    /** Dead messages (one by its id, or all) due again at once with their tries reset; answers how many. */
    const retry = (which: { readonly id: string } | "dead") =>
      Effect.flatMap(DateTime.now, (now) => outbox.resend(which, now))

    return { list, add, remove, test, retry } as const
  })
}) {}
