import { Data } from "effect"
import type { SecurityNotice } from "./SecurityNotice.js"
import type { PublicUser } from "./User.js"

/**
 * The named events a deployment may handle. Names are the spec's (after_register,
 * send_verification_email, ...); each carries the spec's arguments.
 */
export type AuthEvent = Data.TaggedEnum<{
  after_register: { readonly user: PublicUser }
  after_login: { readonly user: PublicUser }
  after_logout: { readonly user: PublicUser }
  after_password_change: { readonly user: PublicUser }
  after_password_reset: { readonly user: PublicUser }
  after_email_verify: { readonly user: PublicUser }
  after_oauth_login: { readonly user: PublicUser; readonly provider: string; readonly is_new_user: boolean }
  after_oauth_register: { readonly user: PublicUser; readonly user_info: Readonly<Record<string, unknown>> }
  after_oauth_link: { readonly user: PublicUser; readonly provider: string }
  after_oauth_unlink: { readonly user: PublicUser; readonly provider: string }
  /** A verification token was generated for this address. */
  send_verification_email: { readonly email: string; readonly token: string }
  /** A password-reset token was generated for this address. */
  send_password_reset_email: { readonly email: string; readonly token: string }
  /** An address change's confirmation token, for the new address. */
  send_email_change_email: { readonly email: string; readonly token: string }
  /** An address change's approval token, for the verified current address; `new_email` is where it moves. */
  send_email_change_approval_email: { readonly email: string; readonly token: string; readonly new_email: string }
  /** The undo token of an address change made, for the old address; `new_email` is where it moved. */
  send_email_change_undo_email: { readonly email: string; readonly token: string; readonly new_email: string }
  /**
   * A sign-in link's token and its code for this address (EMAIL_SIGN_IN_ENABLED); `sign_up` when
   * no account holds it yet, and confirming creates one.
   */
  send_sign_in_email: {
    readonly email: string
    readonly token: string
    readonly code: string
    readonly sign_up: boolean
    /**
     * Asked from the OpenID Provider's sign-in page: the parked authorization request the link
     * resumes (it opens `/oauth2/sign-in?request=…&token=…`).
     */
    readonly authorization_request?: string | undefined
  }
  /**
   * A way in of the account at this address was added or removed, or its password set, changed
   * or reset: its owner is told (SECURITY_NOTICES). Not one of the spec's events.
   */
  send_security_notice: { readonly email: string; readonly notice: SecurityNotice }
}>
export const AuthEvent = Data.taggedEnum<AuthEvent>()

export type AuthEventName = AuthEvent["_tag"]

/** The events that carry a token to the user's inbox, always served. */
export const sendEvents = [
  "send_verification_email",
  "send_password_reset_email",
  "send_email_change_email",
  "send_email_change_approval_email",
  "send_email_change_undo_email"
] as const satisfies ReadonlyArray<AuthEventName>

/** Every event name a deployment may handle. */
export const eventNames = [
  "after_register",
  "after_login",
  "after_logout",
  "after_password_change",
  "after_password_reset",
  "after_email_verify",
  "after_oauth_login",
  "after_oauth_register",
  "after_oauth_link",
  "after_oauth_unlink",
  "send_verification_email",
  "send_password_reset_email",
  "send_sign_in_email",
  "send_email_change_email",
  "send_email_change_approval_email",
  "send_email_change_undo_email",
  "send_security_notice"
] as const satisfies ReadonlyArray<AuthEventName>
