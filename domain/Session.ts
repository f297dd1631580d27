import { Data, DateTime, Duration, Option, Order, Schema } from "effect"
import { UserId } from "./User.js"

/** One sign-in and every refresh token rotated from it: a session, a device. */
export const FamilyId = Schema.String.pipe(Schema.brand("FamilyId"))
export type FamilyId = typeof FamilyId.Type

/** Where a session was opened from, as far as the request tells. */
export interface ClientInfo {
  readonly ip_address: string | null
  readonly user_agent: string | null
}

/** A session as stored. Its expiry follows its newest refresh token. */
export class TokenFamily extends Schema.Class<TokenFamily>("TokenFamily")({
  family_id: FamilyId,
  user_id: UserId,
  ip_address: Schema.NullOr(Schema.String),
  user_agent: Schema.NullOr(Schema.String),
  created_at: Schema.DateTimeUtc,
  last_used_at: Schema.DateTimeUtc,
  expires_at: Schema.DateTimeUtc,
  revoked_at: Schema.OptionFromNullOr(Schema.DateTimeUtc)
}) {}

/**
 * A refresh token as stored: only the SHA-256 digest of the token, never the token. Once rotated
 * it records when; with a reuse grace window it also keeps its successor pair, sealed, so that a
 * racing retry receives the same pair instead of a second one.
 */
export class StoredRefreshToken extends Schema.Class<StoredRefreshToken>("StoredRefreshToken")({
  digest: Schema.String,
  family_id: FamilyId,
  issued_at: Schema.DateTimeUtc,
  expires_at: Schema.DateTimeUtc,
  rotated_at: Schema.OptionFromNullOr(Schema.DateTimeUtc),
  sealed_successor: Schema.OptionFromNullOr(Schema.String)
}) {}

/** One active session as a client sees it. */
export const SessionInfo = Schema.Struct({
  family_id: FamilyId,
  ip_address: Schema.NullOr(Schema.String),
  user_agent: Schema.NullOr(Schema.String),
  created_at: Schema.DateTimeUtc,
  last_used_at: Schema.DateTimeUtc,
  expires_at: Schema.DateTimeUtc,
  current: Schema.Boolean
}).annotations({
  identifier: "SessionInfo",
  examples: [
    {
      family_id: FamilyId.make("5b0f6c1e-3d2a-4f8b-9c7e-1a2b3c4d5e6f"),
      ip_address: "203.0.113.7",
      user_agent: "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 Safari/605.1.15",
      created_at: DateTime.unsafeMake("2025-03-14T09:26:53.000Z"),
      last_used_at: DateTime.unsafeMake("2025-03-15T18:02:11.000Z"),
      expires_at: DateTime.unsafeMake("2025-04-14T18:02:11.000Z"),
      current: true
    }
  ]
})
export type SessionInfo = typeof SessionInfo.Type

/** A session that can still be used: not ended, and its newest refresh token not yet expired. */
export const isLive = (family: TokenFamily, now: DateTime.Utc): boolean =>
  Option.isNone(family.revoked_at) && DateTime.lessThan(now, family.expires_at)

/**
 * Most recently used first; among sessions last used at the same instant, by id, descending, so
 * that the order is total and a store can walk it through its index of live sessions.
 */
export const byRecentUse: Order.Order<TokenFamily> = Order.combine(
  Order.reverse(Order.mapInput(DateTime.Order, (family: TokenFamily) => family.last_used_at)),
  Order.reverse(Order.mapInput(Order.string, (family: TokenFamily) => family.family_id))
)

/** A place in a user's list of sessions: just after the session last used at `last_used_at` with id `family_id`. */
export interface SessionPosition {
  /** Milliseconds since the epoch. */
  readonly last_used_at: number
  readonly family_id: string
}

/** The place before every session: a list's next page that starts at its top. */
export const listTop: SessionPosition = { last_used_at: Number.MAX_SAFE_INTEGER, family_id: "" }

/** Whether `family` comes after `position` in the list (byRecentUse). */
export const isAfter = (family: TokenFamily, position: SessionPosition): boolean => {
  const usedAt = DateTime.toEpochMillis(family.last_used_at)
  return usedAt < position.last_used_at || (usedAt === position.last_used_at && family.family_id < position.family_id)
}

/** The place just after `family`. */
export const positionOf = (family: TokenFamily): SessionPosition => ({
  last_used_at: DateTime.toEpochMillis(family.last_used_at),
  family_id: family.family_id
})

export const SESSION_PAGE_DEFAULT = 100
export const SESSION_PAGE_MAX = 500

/** How many sessions a page lists (`?limit=`). */
export const SessionLimit = Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, SESSION_PAGE_MAX)).annotations(
  { message: () => ({ message: `must be a whole number from 1 to ${SESSION_PAGE_MAX}`, override: true }) }
)

/**
 * A page's place in the list (`?cursor=`), as the Link header of the page before gave it: the
 * last use in milliseconds and the id of the session before it. Only a place in the caller's own
 * list: a forged one shows nothing that the list's first page would not.
 */
export const SessionCursor = Schema.String.pipe(
  Schema.pattern(/^\d{1,16}\.[A-Za-z0-9_-]{0,128}$/),
  Schema.annotations({ message: () => ({ message: "must be a cursor from the Link header", override: true }) }),
  Schema.brand("SessionCursor")
)
export type SessionCursor = typeof SessionCursor.Type

/** The cursor of a page that starts after `position`. */
export const sessionCursor = (position: SessionPosition): SessionCursor =>
  SessionCursor.make(`${position.last_used_at}.${position.family_id}`)

/** The place a cursor names. */
export const positionOfCursor = (cursor: SessionCursor): SessionPosition => {
  const dot = cursor.indexOf(".")
  return { last_used_at: Number(cursor.slice(0, dot)), family_id: cursor.slice(dot + 1) }
}

/** A session as its owner is shown it, marked `current` when it is the one making the request. */
export const sessionInfo = (family: TokenFamily, current: Option.Option<FamilyId>): SessionInfo => ({
  family_id: family.family_id,
  ip_address: family.ip_address,
  user_agent: family.user_agent,
  created_at: family.created_at,
  last_used_at: family.last_used_at,
  expires_at: family.expires_at,
  current: Option.contains(current, family.family_id)
})

/** One page of a user's sessions, and where the next one starts, if there is one. */
export interface SessionPage {
  readonly sessions: ReadonlyArray<SessionInfo>
  readonly next: Option.Option<SessionPosition>
}

/**
 * A page of the sessions a user is shown, of at most `limit`: on the first page the caller's own
 * session (`own`, when live) first, then `others` (read one past the room left, most recently
 * used first, the caller's own left out). A further page exists when `others` had more than fit.
 */
export const sessionPage = (
  own: Option.Option<TokenFamily>,
  others: ReadonlyArray<TokenFamily>,
  limit: number,
  current: Option.Option<FamilyId>
): SessionPage => {
  const room = limit - (Option.isSome(own) ? 1 : 0)
  const shown = others.slice(0, room)
  const last = shown.at(-1)
  return {
    sessions: [...Option.toArray(own), ...shown].map((family) => sessionInfo(family, current)),
    next: others.length > room ? Option.some(last === undefined ? listTop : positionOf(last)) : Option.none()
  }
}

/** What to do with a presented refresh token. */
export type RefreshDecision = Data.TaggedEnum<{
  /** Not a token this service holds (or its session was deleted). */
  Unknown: {}
  /** Its session was ended: logout, session revocation, password change, reuse. */
  Revoked: {}
  Expired: {}
  /** A rotated token came back after the grace window: assume theft, end the session. */
  ReuseDetected: { readonly family: TokenFamily }
  /** A rotated token came back within the grace window: answer the successor it already has. */
  ReplaySuccessor: { readonly sealedSuccessor: string }
  /** A live token: replace it with a new one. */
  Rotate: { readonly family: TokenFamily }
}>
export const RefreshDecision = Data.taggedEnum<RefreshDecision>()

/**
 * The refresh-family rule. An ended session wins over everything; an expired token is only
 * refused (its presentation proves nothing about theft); a rotated token presented again is
 * reuse, unless it comes back within `grace` of its rotation and its successor was kept.
 */
export const decideRefresh = (
  found: Option.Option<{ readonly token: StoredRefreshToken; readonly family: TokenFamily }>,
  now: DateTime.Utc,
  grace: Duration.Duration
): RefreshDecision => {
  if (Option.isNone(found)) return RefreshDecision.Unknown()
  const { token, family } = found.value
  if (Option.isSome(family.revoked_at)) return RefreshDecision.Revoked()
  if (DateTime.lessThanOrEqualTo(token.expires_at, now)) return RefreshDecision.Expired()
  if (Option.isNone(token.rotated_at)) return RefreshDecision.Rotate({ family })
  const withinGrace =
    !Duration.isZero(grace) && Duration.lessThanOrEqualTo(DateTime.distanceDuration(token.rotated_at.value, now), grace)
  if (withinGrace && Option.isSome(token.sealed_successor)) {
    return RefreshDecision.ReplaySuccessor({ sealedSuccessor: token.sealed_successor.value })
  }
  return RefreshDecision.ReuseDetected({ family })
}
