import { DateTime, Duration, Schema } from "effect"
import { exampleOf } from "./examples.js"
import { hasControlCharacter } from "./Text.js"
import { UserId, UserIdJson } from "./User.js"

/**
 * The security events the audit log records. The names are stable: operators filter on them and
 * keep them in their own archives.
 */
export const AuditEventType = Schema.Literal(
  "sign_in.succeeded",
  "sign_in.failed",
  "account.locked",
  "refresh.reuse_detected",
  "password.set",
  "password.changed",
  "password.reset",
  "email.verified",
  "role.assigned",
  "role.removed",
  "permission.assigned",
  "permission.removed",
  "session.logged_out",
  "session.revoked",
  "session.evicted",
  "sessions.revoked_others",
  "sessions.revoked_all",
  "user.created",
  "user.updated",
  "account.deleted",
  "oauth.linked",
  "oauth.auto_linked",
  "oauth.unlinked",
  "passkey.registered",
  "passkey.removed",
  "takeover.password_cleared",
  "takeover.passkey_removed",
  "takeover.provider_unlinked",
  "takeover.sessions_ended",
  "email_sign_in.requested",
  "email_sign_in.code_failed",
  "email_sign_in.voided",
  "email.change_requested",
  "email.change_confirmed",
  "email.change_undone",
  "webhook.endpoint_added",
  "webhook.endpoint_removed",
  "oidc.client_added",
  "oidc.client_removed",
  "oidc.client_secret_rotated",
  "oidc.resource_added",
  "oidc.resource_removed",
  "oidc.consent_granted",
  "oidc.consent_withdrawn"
)
export type AuditEventType = typeof AuditEventType.Type

/**
 * Who did it: the user acting on their own account, a superuser through the admin API, an
 * operator through the CLI, or nobody known (a failed sign-in, a reused refresh token).
 */
export const ActorKind = Schema.Literal("user", "superuser", "cli", "none")
export type ActorKind = typeof ActorKind.Type

export interface Actor {
  readonly kind: ActorKind
  readonly id: UserId | null
}

export const Actor = {
  user: (id: UserId): Actor => ({ kind: "user", id }),
  superuser: (id: UserId): Actor => ({ kind: "superuser", id }),
  cli: { kind: "cli", id: null } as Actor,
  none: { kind: "none", id: null } as Actor
}

/**
 * What an event adds: a few flat values (a role, a provider, a count, a reason). Never a
 * password, a token or any other secret: the use cases put names and counts here, nothing a
 * client sent as a credential.
 */
export const AuditDetails = Schema.Record({
  key: Schema.String,
  value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Null)
})
export type AuditDetails = typeof AuditDetails.Type

/** A client-supplied text (a typed identifier, a device name) is kept this long at most. */
export const DETAIL_TEXT_MAX = 256

/** Details as they are stored: client-supplied texts cut to DETAIL_TEXT_MAX, so a row stays small. */
export const boundedDetails = (details: AuditDetails): AuditDetails =>
  Object.fromEntries(
    Object.entries(details).map(([key, value]) => [
      key,
      typeof value === "string" ? value.slice(0, DETAIL_TEXT_MAX) : value
    ])
  )

/** One event as it is recorded: when, what, about whom, by whom, from where. */
export const AuditEntry = Schema.Struct({
  occurred_at: Schema.DateTimeUtc,
  type: AuditEventType,
  /** The subject: the user the event is about, when one is known. */
  user_id: Schema.NullOr(UserId),
  actor: Schema.Struct({ kind: ActorKind, id: Schema.NullOr(UserId) }),
  ip_address: Schema.NullOr(Schema.String),
  user_agent: Schema.NullOr(Schema.String),
  details: AuditDetails
})
export type AuditEntry = typeof AuditEntry.Type

/** A recorded entry and its place in the log: ids grow with each entry, so newest first is id order. */
export const AuditRecord = Schema.Struct({ id: Schema.Int, ...AuditEntry.fields })
export type AuditRecord = typeof AuditRecord.Type

/** An entry on the wire (API, CLI): ids of users in the deployment's JSON form. */
export const AuditRecordJson = Schema.Struct({
  ...AuditRecord.fields,
  user_id: Schema.NullOr(UserIdJson),
  actor: Schema.Struct({ kind: ActorKind, id: Schema.NullOr(UserIdJson) })
}).annotations({
  identifier: "AuditEvent",
  examples: [
    {
      id: 4182,
      occurred_at: DateTime.unsafeMake("2025-03-15T18:02:11.000Z"),
      type: "sign_in.succeeded",
      user_id: UserId.make("0195a3c2-7b1e-7c3a-9d4f-2a6b8c0e1f37"),
      actor: { kind: "user", id: UserId.make("0195a3c2-7b1e-7c3a-9d4f-2a6b8c0e1f37") },
      ip_address: "203.0.113.7",
      user_agent: "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 Safari/605.1.15",
      details: { method: "password", family_id: "5b0f6c1e-3d2a-4f8b-9c7e-1a2b3c4d5e6f" }
    }
  ]
})

/** A page on the wire: the entries, and the cursor of the next page (null on the last). */
export const AuditPageJson = Schema.Struct({
  events: Schema.Array(AuditRecordJson),
  next_cursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "AuditPage", examples: [{ events: [exampleOf(AuditRecordJson)], next_cursor: "4182" }] })

/** How many entries a page holds unless the reader asks otherwise, and at most. */
export const AUDIT_PAGE_DEFAULT = 50
export const AUDIT_PAGE_MAX = 500

/** Which entries to read, newest first: `before` is the id the previous page ended at. */
export interface AuditQuery {
  readonly user_id?: UserId | undefined
  readonly type?: AuditEventType | undefined
  readonly before?: number | undefined
  readonly limit: number
}

/** A page of entries and where the next one starts, null on the last page. */
export interface AuditPage {
  readonly events: ReadonlyArray<AuditRecord>
  readonly next_cursor: string | null
}

/** The page of a query that read one entry more than `limit`: that one tells whether another page follows. */
export const auditPage = (read: ReadonlyArray<AuditRecord>, limit: number): AuditPage => {
  const events = read.slice(0, limit)
  const last = events[events.length - 1]
  return { events, next_cursor: read.length > limit && last !== undefined ? String(last.id) : null }
}

/** A cursor as the API and the CLI take it: the decimal id of the last entry seen. */
export const AuditCursor = Schema.NumberFromString.pipe(
  Schema.int(),
  Schema.positive(),
  Schema.lessThan(2 ** 53)
).annotations({
  // One message for every fault, overriding the parser's, which would repeat the value sent.
  message: () => ({ message: "must be a cursor from next_cursor", override: true })
})

/** A page size as the API and the CLI take it. */
export const AuditLimit = Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, AUDIT_PAGE_MAX)).annotations({
  message: () => ({ message: `must be a whole number from 1 to ${AUDIT_PAGE_MAX}`, override: true })
})

/** A user id to filter by, as text: integer ids too, as the store keeps them. */
export const AuditUserFilter = Schema.String.pipe(
  Schema.filter((id) => id.length >= 1 && id.length <= 128 && !hasControlCharacter(id), {
    message: () => "must be a user id"
  }),
  Schema.compose(UserId)
)

/** Entries older than this instant are past the retention period. */
export const retentionCutoff = (now: DateTime.Utc, retentionDays: number): DateTime.Utc =>
  DateTime.subtractDuration(now, Duration.days(retentionDays))
