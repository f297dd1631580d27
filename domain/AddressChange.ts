import { Data, DateTime, type Option } from "effect"
import type { UserId } from "./User.js"
import type { Eviction } from "./WaysIn.js"

/**
 * Moving an account to another address (docs/behaviour.md, "Address change"). A
 * stolen access token must never be enough: the request needs a recent sign-in and the current
 * password, the new address proves itself by a mailed link, and a verified current address must
 * approve by a link of its own, so that whoever holds the session but not the mailbox moves
 * nothing. A pending change lives as long as the session that asked for it and the ways in it
 * saw; once made, the old address can undo it for a while.
 */

/** The two links of a change: to the address it moves to, and to the address it moves from. */
export type ChangeLink = "new" | "current"

/** A change asked for and not yet made, as stored: never the links' tokens themselves. */
export interface PendingAddressChange {
  readonly user_id: UserId
  /** Where the account moves, normalised. */
  readonly new_email: string
  /** The session that asked: the change ends with it. */
  readonly family_id: string
  /** The credential version the request saw: a change of a way in since then voids the change. */
  readonly credential_version: number
  /** SHA-256 of the new address's link token. */
  readonly new_token_digest: string
  /** SHA-256 of the current address's link token; none when that address was never verified. */
  readonly current_token_digest: string | null
  readonly new_confirmed: boolean
  readonly current_confirmed: boolean
  readonly created_at: DateTime.Utc
  readonly expires_at: DateTime.Utc
}

/** The links a change still waits for. */
export const awaitedLinks = (pending: PendingAddressChange): ReadonlyArray<ChangeLink> => [
  ...(pending.new_confirmed ? [] : (["new"] as const)),
  ...(pending.current_token_digest === null || pending.current_confirmed ? [] : (["current"] as const))
]

/** Which of its links a token digest is, if either. */
export const linkOf = (pending: PendingAddressChange, tokenDigest: string): ChangeLink | null =>
  pending.new_token_digest === tokenDigest ? "new" : pending.current_token_digest === tokenDigest ? "current" : null

/** What the service knows when a link is used, besides the change itself. */
export interface LinkContext {
  readonly now: DateTime.Utc
  /** The account as stored now; none when it is gone. */
  readonly account: Option.Option<{ readonly is_active: boolean; readonly credential_version: number }>
  /** Whether the session that asked is still live (not ended, not expired). */
  readonly sessionLive: boolean
}

/** Why a pending change can no longer be made. */
export type VoidReason = "expired" | "account_gone" | "session_ended" | "credentials_changed"

export type LinkDecision = Data.TaggedEnum<{
  /** This link is counted; the other one is still awaited. */
  Await: { readonly awaiting: ChangeLink }
  /** Every link is in: the account moves. */
  Move: {}
  /** The change is void: the link works no more. */
  Void: { readonly reason: VoidReason }
}>
export const LinkDecision = Data.taggedEnum<LinkDecision>()

/**
 * What using one of a change's links does. The change is void once it expired, its account went
 * or was deactivated, the session that asked ended (sign-out, revoked, revoke-others, deletion),
 * or a way in changed since the request (a password change or reset moves the credential
 * version): whoever asked with a stolen session loses the change with it.
 */
export const decideLink = (pending: PendingAddressChange, link: ChangeLink, context: LinkContext): LinkDecision => {
  if (DateTime.lessThanOrEqualTo(pending.expires_at, context.now)) return LinkDecision.Void({ reason: "expired" })
  if (context.account._tag === "None" || !context.account.value.is_active) {
    return LinkDecision.Void({ reason: "account_gone" })
  }
  if (context.account.value.credential_version !== pending.credential_version) {
    return LinkDecision.Void({ reason: "credentials_changed" })
  }
  if (!context.sessionLive) return LinkDecision.Void({ reason: "session_ended" })
  const left = awaitedLinks(pending).filter((awaited) => awaited !== link)
  const [awaiting] = left
  return awaiting === undefined ? LinkDecision.Move() : LinkDecision.Await({ awaiting })
}

/**
 * A change made, as the old address can undo it: its token's digest, the address to restore,
 * and when the change was made (what was added since goes with the undo). While it lasts, the old
 * address is reserved: nobody registers it or moves to it.
 */
export interface AddressChangeUndo {
  readonly token_digest: string
  readonly user_id: UserId
  readonly old_email: string
  readonly new_email: string
  readonly changed_at: DateTime.Utc
  readonly expires_at: DateTime.Utc
}

/** Whether an undo can still be used (and its old address is still reserved). */
export const undoIsLive = (undo: AddressChangeUndo, now: DateTime.Utc): boolean =>
  DateTime.greaterThan(undo.expires_at, now)

/** A way in with the time it was added. */
export interface AddedWay {
  readonly id: string
  readonly created_at: DateTime.Utc
}

/**
 * What an undo removes: the password (whoever moved the account may have set it), and every
 * passkey and provider link added at or after the change; those from before stay, their owner
 * was told of each when it was added.
 */
export const undoEviction = (
  ways: {
    readonly hasPassword: boolean
    readonly passkeys: ReadonlyArray<AddedWay>
    readonly providers: ReadonlyArray<AddedWay>
  },
  changedAt: DateTime.Utc
): Eviction => {
  const since = (way: AddedWay) => DateTime.greaterThanOrEqualTo(way.created_at, changedAt)
  return {
    password: ways.hasPassword,
    passkeys: ways.passkeys.filter(since).map((way) => way.id),
    providers: ways.providers.filter(since).map((way) => way.id)
  }
}
