import { Data, DateTime } from "effect"
import type { AuditEventType } from "./Audit.js"
import type { NoticeKind } from "./SecurityNotice.js"

/**
 * A user's ways in: the password, each passkey and each linked provider account. Every feature
 * that adds, removes or proves one follows the rules here (docs/behaviour.md, "Ways in"), so that no
 * feature keeps a copy of its own:
 *
 * - every change of a way in changes the user's credential version, and a sign-in starts its
 *   session only if the version it read before checking the credential is still the stored one
 *   (the store compares it in the transaction that writes the session);
 * - adding a way in needs a recent sign-in (`auth_time`), unless the request proves itself;
 * - the owner is told of every change;
 * - a proof of the address evicts every way in of an account that never proved it.
 */

/** The ways in a user has, as stored now. */
export interface UserWaysIn {
  readonly hasPassword: boolean
  /** The providers of the user's linked accounts. */
  readonly linkedProviders: ReadonlyArray<string>
  /** The ids of the user's passkeys. */
  readonly passkeys: ReadonlyArray<string>
}

/** Whether any way to sign in is left. */
export const canSignIn = (ways: UserWaysIn): boolean =>
  ways.hasPassword || ways.linkedProviders.length > 0 || ways.passkeys.length > 0

/** A way in that a user asks to remove. */
export type Removal = Data.TaggedEnum<{
  Passkey: { readonly id: string }
  Provider: { readonly provider: string }
}>
export const Removal = Data.taggedEnum<Removal>()

export type RemovalDecision = Data.TaggedEnum<{
  Remove: {}
  /** Not one of the user's: unknown and another user's answer alike (404). */
  NotFound: {}
  /** It is the user's last way to sign in (spec OAuth rule 6, passkey rule 6): refused. */
  LastWayToSignIn: {}
}>
export const RemovalDecision = Data.taggedEnum<RemovalDecision>()

/**
 * Removing a way in: the user's own goes, unless none would be left. Callers check again with
 * the ways stored after the removal, for two removals racing over the last two ways each saw
 * the other one left.
 */
export const decideRemoval = (ways: UserWaysIn, removal: Removal): RemovalDecision => {
  const left = Removal.$match(removal, {
    Passkey: ({ id }) =>
      ways.passkeys.includes(id) ? { ...ways, passkeys: ways.passkeys.filter((held) => held !== id) } : undefined,
    Provider: ({ provider }) =>
      ways.linkedProviders.includes(provider)
        ? { ...ways, linkedProviders: ways.linkedProviders.filter((held) => held !== provider) }
        : undefined
  })
  if (left === undefined) return RemovalDecision.NotFound()
  return canSignIn(left) ? RemovalDecision.Remove() : RemovalDecision.LastWayToSignIn()
}

/**
 * A change of a user's ways in. Each one changes the credential version, so a sign-in whose
 * check began before it never starts a session after it.
 */
export type WayInChange = Data.TaggedEnum<{
  /** A first password on an account without one (change-password without `current_password`). */
  PasswordSet: {}
  /** A new password, the current one proven. */
  PasswordChanged: {}
  /** A new password from the mailed reset link, or an operator's. */
  PasswordReset: {}
  PasskeyAdded: { readonly passkey_id: string; readonly device_name: string }
  PasskeyRemoved: { readonly passkey_id: string; readonly device_name: string }
  /** `automatic`: an auto-link by a provider-verified email at sign-in, not the user's link. */
  ProviderLinked: { readonly provider: string; readonly automatic: boolean }
  ProviderUnlinked: { readonly provider: string }
  /** A proof of the address removed every way in of whoever had not proved it. */
  TakenOver: { readonly removed: Eviction }
  /** An operator deactivated the account. */
  Deactivated: {}
  /**
   * The account moved to another address, proven by a link mailed there (and approved from the
   * old one when it was verified). `undoable`: the old address got an undo link, which is its
   * notice.
   */
  EmailChanged: { readonly from: string; readonly to: string; readonly undoable: boolean }
  /**
   * The old address undid a change: the account is back at `restored`, its password cleared and
   * the ways in added since the change removed.
   */
  EmailChangeUndone: { readonly restored: string; readonly removed: Eviction }
}>
export const WayInChange = Data.taggedEnum<WayInChange>()

/** Which of the user's sessions a change ends. */
export type SessionsEnded = "all" | "all_but_caller" | "none"

/**
 * The sessions a change ends: a new password ends every other session (the caller's goes on when
 * the caller proved the change), a reset, a takeover and a deactivation every one. Adding or
 * removing a passkey or a provider ends none: the sessions were started by ways in that stay.
 */
export const sessionsEndedBy = (change: WayInChange): SessionsEnded => {
  switch (change._tag) {
    case "PasswordSet":
    case "PasswordChanged":
    case "EmailChanged":
      return "all_but_caller"
    case "PasswordReset":
    case "TakenOver":
    case "Deactivated":
    case "EmailChangeUndone":
      return "all"
    case "PasskeyAdded":
    case "PasskeyRemoved":
    case "ProviderLinked":
    case "ProviderUnlinked":
      return "none"
  }
}

/** The audit entry a change writes. */
export const auditTypeOf = (change: WayInChange): AuditEventType => {
  switch (change._tag) {
    case "PasswordSet":
      return "password.set"
    case "PasswordChanged":
      return "password.changed"
    case "PasswordReset":
      return "password.reset"
    case "PasskeyAdded":
      return "passkey.registered"
    case "PasskeyRemoved":
      return "passkey.removed"
    case "ProviderLinked":
      return change.automatic ? "oauth.auto_linked" : "oauth.linked"
    case "ProviderUnlinked":
      return "oauth.unlinked"
    case "TakenOver":
      return "takeover.sessions_ended"
    case "Deactivated":
      return "user.updated"
    case "EmailChanged":
      return "email.change_confirmed"
    case "EmailChangeUndone":
      return "email.change_undone"
  }
}

/**
 * Where the sessions a change ended are counted: an entry of their own for a deactivation
 * (`sessions.revoked_all`); otherwise the change's entry says `sessions_ended` (a takeover's is
 * `takeover.sessions_ended` itself, beside an entry for each way in it removed).
 */
export const sessionsEndedEntryOf = (change: WayInChange): AuditEventType | null =>
  change._tag === "Deactivated" ? "sessions.revoked_all" : null

/** The notice a change owes the owner, if any: its kind and what it names (a device, a provider). */
export const noticeOf: (change: WayInChange) => { readonly kind: NoticeKind; readonly subject: string } | null =
  WayInChange.$match({
    PasswordSet: () => ({ kind: "password_set" as const, subject: "" }),
    PasswordChanged: () => ({ kind: "password_changed" as const, subject: "" }),
    PasswordReset: () => ({ kind: "password_reset" as const, subject: "" }),
    PasskeyAdded: ({ device_name }) => ({ kind: "passkey_added" as const, subject: device_name }),
    PasskeyRemoved: ({ device_name }) => ({ kind: "passkey_removed" as const, subject: device_name }),
    ProviderLinked: ({ provider }) => ({ kind: "provider_linked" as const, subject: provider }),
    ProviderUnlinked: ({ provider }) => ({ kind: "provider_unlinked" as const, subject: provider }),
    TakenOver: ({ removed }) => ({ kind: "taken_over" as const, subject: describeEviction(removed) }),
    Deactivated: () => null,
    EmailChanged: ({ to, undoable }) => (undoable ? null : { kind: "email_changed" as const, subject: to }),
    EmailChangeUndone: ({ removed }) => ({ kind: "email_change_undone" as const, subject: describeEviction(removed) })
  })

/** Whether a request is allowed to add a way in on the strength of its session's sign-in. */
export type RecentSignIn = Data.TaggedEnum<{
  Recent: {}
  /** Sign in again, at most `maxAgeSeconds` before adding a way in (RFC 9470). */
  ReauthenticationRequired: { readonly maxAgeSeconds: number }
}>
export const RecentSignIn = Data.taggedEnum<RecentSignIn>()

/**
 * Adding a way in needs a sign-in at most `maxAgeSeconds` old: a stolen access token alone (or a
 * session left open) must not plant a permanent way in. `authTime` is the token's `auth_time`
 * (seconds since the epoch); a token without one (issued before the claim existed) is an old
 * sign-in. A sign-in dated in the future counts as old too: nothing honest makes one.
 */
export const decideRecentSignIn = (
  authTime: number | undefined,
  now: DateTime.Utc,
  maxAgeSeconds: number
): RecentSignIn => {
  const nowSeconds = Math.floor(DateTime.toEpochMillis(now) / 1000)
  return authTime !== undefined && authTime <= nowSeconds && nowSeconds - authTime <= maxAgeSeconds
    ? RecentSignIn.Recent()
    : RecentSignIn.ReauthenticationRequired({ maxAgeSeconds })
}

/** What change-password asks of its caller, who holds a session. */
export type PasswordChangeProof = Data.TaggedEnum<{
  /** The account has a password: the current one must be given and right; that is the proof. */
  CurrentPassword: {}
  /** The account has none (OAuth or passkey only): a first password is a new way in, so a recent sign-in. */
  RecentSignIn: {}
}>
export const PasswordChangeProof = Data.taggedEnum<PasswordChangeProof>()

export const passwordChangeProof = (hasPassword: boolean): PasswordChangeProof =>
  hasPassword ? PasswordChangeProof.CurrentPassword() : PasswordChangeProof.RecentSignIn()

/** The ways in a proof of the address removes. */
export interface Eviction {
  readonly password: boolean
  readonly passkeys: ReadonlyArray<string>
  readonly providers: ReadonlyArray<string>
}

const describeEviction = (removed: Eviction): string =>
  [
    ...(removed.password ? ["the password"] : []),
    ...(removed.passkeys.length === 0
      ? []
      : [removed.passkeys.length === 1 ? "a passkey" : `${removed.passkeys.length} passkeys`]),
    ...removed.providers.map((provider) => `the linked ${provider} account`)
  ].join(", ")

/** Whether a proof of the address takes the account over: it never proved its address itself. */
export const evictsOnProof = (account: { readonly is_verified: boolean }): boolean => !account.is_verified

/** How an address was proven, reaching an account. */
export type AddressProof = "provider_verified_email" | "password_reset_link" | "mailed_sign_in"

export type ProofDecision = Data.TaggedEnum<{
  /**
   * The account never proved its address: whoever registered it is not the one who just did.
   * Every earlier way in goes, with every session, in one transaction; then the account is
   * verified and the prover's way in attached.
   */
  Evict: { readonly eviction: Eviction }
  /** The account had proved its address: its ways in stay (their owner was told of each). */
  Keep: {}
}>
export const ProofDecision = Data.taggedEnum<ProofDecision>()

/**
 * What a proof of the address does to the account it reaches. An unverified account loses every
 * way in that existed before the proof: the password (cleared by an auto-link, replaced by a
 * reset), every passkey, every linked provider.
 */
export const decideProofOfAddress = (account: { readonly is_verified: boolean }, ways: UserWaysIn): ProofDecision =>
  !evictsOnProof(account)
    ? ProofDecision.Keep()
    : ProofDecision.Evict({
        eviction: { password: ways.hasPassword, passkeys: ways.passkeys, providers: ways.linkedProviders }
      })
