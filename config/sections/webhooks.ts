import { createHash } from "node:crypto"
import { Either, Option, Redacted } from "effect"
import { type Subscription, unknownEventTypes, type WebhookEndpoint } from "../../domain/Webhook.js"
import * as F from "../forms.js"
import { PREFIX, type SettingsReader } from "../reader.js"

const expected =
  'a JSON list of {"url": "https://…", "secret": "whsec_…", "events": "*" or ["after_register", "session.revoked", …]}'

/** Standard Webhooks' secrets: `whsec_` and 24 to 64 random bytes in base64. */
const isSecret = (value: unknown): value is string => {
  if (typeof value !== "string" || !value.startsWith("whsec_")) return false
  const key = value.slice("whsec_".length)
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(key)) return false
  const bytes = Buffer.from(key, "base64").length
  return bytes >= 24 && bytes <= 64
}

/** An endpoint's id: the same for the same URL, so that its messages survive a restart with the setting reordered. */
export const endpointId = (url: string) => `wh_${createHash("sha256").update(url).digest("hex").slice(0, 16)}`

/** The endpoints of WEBHOOKS, or what is wrong with the first faulty one (never repeating a secret). */
export const parseEndpoints = (value: unknown): Either.Either<ReadonlyArray<WebhookEndpoint>, string> => {
  if (!Array.isArray(value)) return Either.left(`is not a list; expected ${expected}`)
  const endpoints: Array<WebhookEndpoint> = []
  for (const [index, entry] of value.entries()) {
    const at = `entry ${index + 1}`
    if (typeof entry !== "object" || entry === null) return Either.left(`${at} is not an object; expected ${expected}`)
    const { url, secret, events } = entry as Record<string, unknown>
    let parsed: URL
    try {
      parsed = new URL(String(url))
    } catch {
      return Either.left(`${at} has no valid url; expected an http:// or https:// URL`)
    }
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
      return Either.left(`${at} has a url that is not http:// or https://`)
    }
    if (!isSecret(secret)) return Either.left(`${at} has no valid secret; expected whsec_ and 24 to 64 bytes in base64`)
    const subscription: Subscription | undefined =
      events === "*"
        ? "*"
        : Array.isArray(events) && events.every((type) => typeof type === "string")
          ? events
          : undefined
    if (subscription === undefined || subscription.length === 0) {
      return Either.left(`${at} has no events; expected "*" or a list of event types`)
    }
    const unknown = unknownEventTypes(subscription)
    if (unknown.length > 0) return Either.left(`${at} names unknown event types: ${unknown.join(", ")}`)
    const id = endpointId(parsed.href)
    if (endpoints.some((endpoint) => endpoint.id === id)) return Either.left(`${at} repeats the url of another entry`)
    endpoints.push({ id, url: parsed.href, secret: Redacted.make(secret), events: subscription })
  }
  return Either.right(endpoints)
}

/** Where events leave the process: the endpoints, and whether they may be on private addresses. */
export const readWebhooks = (read: SettingsReader) => {
  const value = read.optional("WEBHOOKS", F.json, {
    secret: true,
    doc: 'Endpoints sent the events they subscribe to, signed to Standard Webhooks: a JSON list of `{"url", "secret": "whsec_…", "events": "*" or [names]}`; names are the spec\'s events (`after_register`) and the audit log\'s types (`session.revoked`). See docs/operating.md, "Webhooks".'
  })
  const endpoints = Option.match(value, {
    onNone: (): ReadonlyArray<WebhookEndpoint> => [],
    onSome: (json) =>
      Either.getOrElse(parseEndpoints(json), (fault) => {
        read.problem(`${PREFIX}WEBHOOKS ${fault}`)
        return []
      })
  })
  return {
    endpoints,
    allowPrivate: read.setting("WEBHOOKS_ALLOW_PRIVATE", F.bool, false, {
      doc: "Let webhook URLs reach private, loopback and link-local addresses (tests, a receiver on the same network)."
    })
  }
}
