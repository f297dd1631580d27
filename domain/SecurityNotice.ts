import type { DateTime } from "effect"

/**
 * The owner's notices (docs/behaviour.md, "Ways in"): what changed of their account's ways in, or
 * what was attempted, and the words a notice says it in, whatever carries it (a mail, a webhook).
 */

/** What the owner's notice says changed; none for an operator's deactivation, which is not a way in. */
export type NoticeKind =
  | "password_set"
  | "password_changed"
  | "password_reset"
  | "passkey_added"
  | "passkey_removed"
  | "provider_linked"
  | "provider_unlinked"
  | "taken_over"
  | "email_change_requested"
  | "email_changed"
  | "email_change_attempted"
  | "email_change_undone"
  | "app_allowed"

/** What a security notice carries: what changed, when, and from which address and client. */
export interface SecurityNotice {
  readonly kind: NoticeKind
  /**
   * What the change names: a passkey's device name, a provider, what a takeover removed, the
   * address an account moves to; empty for a password.
   */
  readonly subject: string
  readonly occurred_at: DateTime.Utc
  readonly ip_address: string | null
  readonly user_agent: string | null
}

/**
 * A value of a notice on one line: a device name and a user agent are whatever the client sent,
 * and a line break in one could make the text part say something the service did not.
 */
export const oneLine = (text: string) => text.replace(/[\p{Cc}\p{Zl}\p{Zp}]+/gu, " ").trim()

const quoted = (name: string) => `\u201c${oneLine(name)}\u201d`

/** A notice's short title (it names nothing a client chose: it goes into the subject) and its sentence. */
export const noticeWording: Readonly<
  Record<NoticeKind, { readonly summary: string; readonly change: (subject: string) => string }>
> = {
  password_set: {
    summary: "A password was set on your account",
    change: () => "A password was set on your account, which had none until now."
  },
  password_changed: {
    summary: "Your password was changed",
    change: () => "The password of your account was changed."
  },
  password_reset: {
    summary: "Your password was reset",
    change: () => "The password of your account was reset, and every session was ended."
  },
  passkey_added: {
    summary: "A passkey was added to your account",
    change: (name) =>
      oneLine(name) === ""
        ? "A passkey was added to your account."
        : `A passkey named ${quoted(name)} was added to your account.`
  },
  passkey_removed: {
    summary: "A passkey was removed from your account",
    change: (name) =>
      oneLine(name) === ""
        ? "A passkey was removed from your account."
        : `The passkey named ${quoted(name)} was removed from your account.`
  },
  provider_linked: {
    summary: "A sign-in provider was linked to your account",
    change: (provider) =>
      `Your account was linked to an account at ${quoted(provider)}: signing in through ${quoted(provider)} now opens it.`
  },
  provider_unlinked: {
    summary: "A sign-in provider was unlinked from your account",
    change: (provider) =>
      `Your account was unlinked from its account at ${quoted(provider)}: signing in through ${quoted(provider)} no longer opens it.`
  },
  email_change_requested: {
    summary: "A change of your account's email address was asked for",
    change: (to) =>
      `Someone signed in to your account asked to move it to the address ${quoted(to)}. Nothing changes unless the link mailed there is followed.`
  },
  email_changed: {
    summary: "Your account's email address was changed",
    change: (to) =>
      `Your account moved to the address ${quoted(to)}, and every other session was ended. This address no longer signs in to it.`
  },
  email_change_undone: {
    summary: "A change of your account's email address was undone",
    change: (removed) =>
      `Your account is back at this address. Every session was ended and the password cleared${oneLine(removed) === "" ? "" : `; removed as well: ${oneLine(removed)}`}. Choose a new password with a password reset to this address.`
  },
  email_change_attempted: {
    summary: "Someone tried to move an account to your address",
    change: () =>
      "Someone signed in to another account asked to move it to this address, which already belongs to an account. Nothing changed."
  },
  app_allowed: {
    summary: "An app can now sign you in",
    change: (app) =>
      `You allowed ${quoted(app)} to sign you in and to see what you agreed to. If it was not you, withdraw it from your apps and change your password.`
  },
  taken_over: {
    summary: "Earlier ways to sign in were removed from your account",
    change: (removed) =>
      oneLine(removed) === ""
        ? "Your email address was confirmed. It had never been confirmed before, so every session started until then was ended."
        : `Your email address was confirmed. It had never been confirmed before, so every way to sign in set up until then was removed (${oneLine(removed)}) and every session was ended.`
  }
}
