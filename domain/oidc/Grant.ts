import { Data, DateTime } from "effect"
import type { WayInChange } from "../WaysIn.js"
import { sessionsEndedBy } from "../WaysIn.js"

/**
 * Whether a change of the user's ways in ends every grant the user gave to apps: the changes that
 * end every session, because the account may have been in another's hands (a reset, a takeover,
 * an address-change undo) or is closed (deactivation). A grant is not a session otherwise: a new
 * password proven with the current one, or signing out elsewhere, leaves the user's apps signed
 * in, as the user chose them. Deleting the account and withdrawing the app's consent end them too.
 */
export const endsGrants = (change: WayInChange): boolean => sessionsEndedBy(change) === "all"

/**
 * A grant: what a user let a client do (its scopes), from one consent-backed authorization on;
 * its refresh tokens rotate within it, as a session's do within its family.
 */
export interface Grant {
  readonly grant_id: string
  readonly client_id: string
  readonly user_id: string
  readonly scopes: ReadonlyArray<string>
  /** The resources (RFC 8707) it holds tokens for; a token request may narrow them, never widen. */
  readonly resources: ReadonlyArray<string>
  /** The sign-in it started from (seconds since the epoch) and how (RFC 8176), for ID tokens. */
  readonly auth_time: number
  readonly amr: ReadonlyArray<string>
  readonly created_at: DateTime.Utc
  readonly last_used_at: DateTime.Utc
  /** Follows its newest refresh token. */
  readonly expires_at: DateTime.Utc
  readonly revoked_at: DateTime.Utc | null
}

/** A grant's refresh token as stored: its digest only. */
export interface GrantToken {
  readonly digest: string
  readonly grant_id: string
  readonly issued_at: DateTime.Utc
  readonly expires_at: DateTime.Utc
  readonly rotated_at: DateTime.Utc | null
}

export type GrantRefresh = Data.TaggedEnum<{
  Unknown: {}
  /** The grant ended: withdrawn, revoked, replayed code, reset, takeover, deactivation. */
  Revoked: {}
  Expired: {}
  /** A rotated token came back: assume theft, end the grant (OAuth 2.1 §4.3.1). */
  ReuseDetected: { readonly grant: Grant }
  Rotate: { readonly grant: Grant }
}>
export const GrantRefresh = Data.taggedEnum<GrantRefresh>()

/**
 * The refresh rule of a grant, the refresh-family rule of sessions without its grace window: a
 * client of the provider that lost an answer signs its user in again rather than hold a token
 * that was shown twice.
 */
export const decideGrantRefresh = (
  found: { readonly token: GrantToken; readonly grant: Grant } | undefined,
  now: DateTime.Utc
): GrantRefresh => {
  if (found === undefined) return GrantRefresh.Unknown()
  const { token, grant } = found
  if (grant.revoked_at !== null) return GrantRefresh.Revoked()
  if (!DateTime.lessThan(now, token.expires_at)) return GrantRefresh.Expired()
  if (token.rotated_at !== null) return GrantRefresh.ReuseDetected({ grant })
  return GrantRefresh.Rotate({ grant })
}
