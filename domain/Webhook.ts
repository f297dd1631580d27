import { Data, DateTime, Duration, Either, type Redacted, Schema } from "effect"
import { AuditEventType } from "./Audit.js"
import { type AuthEvent, type AuthEventName, eventNames } from "./Events.js"
import { PublicUser } from "./User.js"

/**
 * Webhooks (docs/operating.md, "Webhooks"): events that leave the process. Each is written to the
 * outbox in the transaction of the change it reports, then sent at least once, in order per user
 * and endpoint, signed to the Standard Webhooks specification, tried again after a failure on the
 * schedule below, and dead after its last try.
 */

/** Every event type an endpoint may subscribe to: the spec's events and the audit log's types. */
export const webhookEventTypes: ReadonlyArray<string> = [...eventNames, ...AuditEventType.literals]

/** An endpoint's choice of events: every one, or the types named. */
export type Subscription = "*" | ReadonlyArray<string>

/** Whether an endpoint subscribed to `events` is sent an event of `type`. */
export const wants = (events: Subscription, type: string): boolean => events === "*" || events.includes(type)

/** The names among `events` that are no event type: a subscription naming one is refused. */
export const unknownEventTypes = (events: Subscription): ReadonlyArray<string> =>
  events === "*" ? [] : events.filter((type) => !webhookEventTypes.includes(type))

/** Standard Webhooks' secrets: `whsec_` and 24 to 64 random bytes in base64. */
export const isWebhookSecret = (value: unknown): value is string => {
  if (typeof value !== "string" || !value.startsWith("whsec_")) return false
  const key = value.slice("whsec_".length)
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(key)) return false
  const padding = key.endsWith("==") ? 2 : key.endsWith("=") ? 1 : 0
  const bytes = Math.floor((key.length * 3) / 4) - padding
  return bytes >= 24 && bytes <= 64
}

/** An endpoint as an operator gives it (a WEBHOOKS entry, `portcullis webhook add`), checked. */
export interface EndpointRequest {
  readonly url: string
  readonly secret: string
  readonly events: Subscription
}

/**
 * `url`, `secret` and `events` as an endpoint, or what is wrong with them in a sentence that never
 * repeats the secret: an http(s) URL, a Standard Webhooks secret, and "*" or known event types.
 */
export const checkEndpoint = (
  url: unknown,
  secret: unknown,
  events: unknown
): Either.Either<EndpointRequest, string> => {
  let parsed: URL
  try {
    parsed = new URL(String(url))
  } catch {
    return Either.left("has no valid url; expected an http:// or https:// URL")
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    return Either.left("has a url that is not http:// or https://")
  }
  if (!isWebhookSecret(secret)) return Either.left("has no valid secret; expected whsec_ and 24 to 64 bytes in base64")
  const subscription: Subscription | undefined =
    events === "*"
      ? "*"
      : Array.isArray(events) && events.every((type) => typeof type === "string")
        ? events
        : undefined
  if (subscription === undefined || subscription.length === 0) {
    return Either.left('has no events; expected "*" or a list of event types')
  }
  const unknown = unknownEventTypes(subscription)
  if (unknown.length > 0) return Either.left(`names unknown event types: ${unknown.join(", ")}`)
  return Either.right({ url: parsed.href, secret, events: subscription })
}

/**
 * The waits before each try after the first, which is at once: a receiver that is down for a
 * while (a deployment, a restart) is reached again within seconds, one down for a day is given
 * up on after about a day. Eight tries in all, as Standard Webhooks' reference senders make them.
 */
export const RETRY_DELAYS: ReadonlyArray<Duration.Duration> = [
  Duration.seconds(5),
  Duration.minutes(5),
  Duration.minutes(30),
  Duration.hours(2),
  Duration.hours(5),
  Duration.hours(10),
  Duration.hours(10)
]

/** How many tries a message is given before it is dead. */
export const MAX_ATTEMPTS = RETRY_DELAYS.length + 1

/** A wait is moved by up to this share either way, so that messages failed together are not tried again together. */
export const JITTER = 0.2

/** What follows a failed try. */
export type AfterFailure = Data.TaggedEnum<{
  /** Try again at `at`. */
  Retry: { readonly at: DateTime.Utc }
  /** That was the last try: the message is dead until an operator sends it again. */
  Dead: {}
}>
export const AfterFailure = Data.taggedEnum<AfterFailure>()

/**
 * After the `attempts`-th try failed at `now`: when to try again, or dead. `random` is a number
 * in [0, 1) that places the wait within its jitter.
 */
export const afterFailure = (attempts: number, now: DateTime.Utc, random: number): AfterFailure => {
  const delay = RETRY_DELAYS[attempts - 1]
  if (delay === undefined) return AfterFailure.Dead()
  const millis = Duration.toMillis(delay) * (1 - JITTER + 2 * JITTER * random)
  return AfterFailure.Retry({ at: DateTime.addDuration(now, Duration.millis(Math.round(millis))) })
}

/** The body an endpoint receives: ids and public fields only, never a secret, token or password. */
export interface WebhookPayload {
  readonly type: string
  /** When the change happened, ISO 8601. */
  readonly timestamp: string
  readonly data: Readonly<Record<string, unknown>>
}

/** A message's body as sent and signed: the JSON of its payload. */
export const payloadBody = (payload: WebhookPayload): string => JSON.stringify(payload)

/** What one try of a message came to. */
export type DeliveryOutcome = Data.TaggedEnum<{
  /** The receiver answered 2xx: the message is delivered. */
  Delivered: { readonly status: number }
  /** Anything else (an answer not 2xx, a redirect, a timeout, a refused address): why, for the operator. */
  Failed: { readonly reason: string }
}>
export const DeliveryOutcome = Data.taggedEnum<DeliveryOutcome>()

/** An endpoint messages are sent to. */
export interface WebhookEndpoint {
  /** Stable while its URL is the same: the outbox's rows name it. */
  readonly id: string
  readonly url: string
  /** `whsec_` and the key in base64, as Standard Webhooks writes secrets. */
  readonly secret: Redacted.Redacted<string>
  readonly events: Subscription
}

/**
 * What a receiver is told of one of the spec's events: the user as GET /me shows them and the
 * event's other arguments, less anything that opens an account. The send events' token and code
 * are the mail's to carry, never a webhook's; an OAuth profile stays with its provider.
 */
export const eventMessage = (
  event: AuthEvent
): { readonly type: AuthEventName; readonly user_id: string | null; readonly data: Record<string, unknown> } => {
  const user = (value: PublicUser) => Schema.encodeSync(PublicUser)(value) as Record<string, unknown>
  switch (event._tag) {
    case "send_verification_email":
    case "send_password_reset_email":
    case "send_email_change_email":
      return { type: event._tag, user_id: null, data: { email: event.email } }
    case "send_email_change_approval_email":
    case "send_email_change_undo_email":
      return { type: event._tag, user_id: null, data: { email: event.email, new_email: event.new_email } }
    case "send_sign_in_email":
      return { type: event._tag, user_id: null, data: { email: event.email, sign_up: event.sign_up } }
    case "send_security_notice":
      return {
        type: event._tag,
        user_id: null,
        data: {
          email: event.email,
          notice: {
            kind: event.notice.kind,
            subject: event.notice.subject,
            occurred_at: DateTime.formatIso(event.notice.occurred_at)
          }
        }
      }
    case "after_oauth_register":
      return { type: event._tag, user_id: String(event.user.id), data: { user: user(event.user) } }
    case "after_oauth_login":
      return {
        type: event._tag,
        user_id: String(event.user.id),
        data: { user: user(event.user), provider: event.provider, is_new_user: event.is_new_user }
      }
    case "after_oauth_link":
    case "after_oauth_unlink":
      return {
        type: event._tag,
        user_id: String(event.user.id),
        data: { user: user(event.user), provider: event.provider }
      }
    default:
      return { type: event._tag, user_id: String(event.user.id), data: { user: user(event.user) } }
  }
}
