import { createHash } from "node:crypto"
import { Either, Option, Redacted } from "effect"
import { checkEndpoint, type WebhookEndpoint } from "../../domain/Webhook.js"
import * as F from "../forms.js"
import { PREFIX, type SettingsReader } from "../reader.js"

const expected =
  'a JSON list of {"url": "https://…", "secret": "whsec_…", "events": "*" or ["after_register", "session.revoked", …]}'

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
    const checked = checkEndpoint(url, secret, events)
    if (Either.isLeft(checked)) return Either.left(`${at} ${checked.left}`)
    const { url: href, secret: key, events: subscription } = checked.right
    const id = endpointId(href)
    if (endpoints.some((endpoint) => endpoint.id === id)) return Either.left(`${at} repeats the url of another entry`)
    endpoints.push({ id, url: href, secret: Redacted.make(key), events: subscription })
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
