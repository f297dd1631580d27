import { Data, type DateTime, Option } from "effect"
import type { User } from "./User.js"

/**
 * Sign-in by a mailed link or code (docs/behaviour.md, "Sign-in by mail"): one
 * request per address at a time, its token and its code kept as digests only, single use, and
 * void after MAX_CODE_ATTEMPTS wrong codes.
 */

/** Wrong codes a request takes before it is void: a guesser has five tries in a million. */
export const MAX_CODE_ATTEMPTS = 5

/** The code's digits: what a reader types from the mail into the app. */
export const CODE_DIGITS = 6

/** A pending request, as stored: never the token or the code themselves. */
export interface EmailSignInRequest {
  /** The address the mail went to, normalised: the one request it may have. */
  readonly email: string
  /** SHA-256 of the link's token. */
  readonly token_digest: string
  /** A keyed MAC of the code (a bare digest of six digits is a lookup table away). */
  readonly code_digest: string
  /** The deployment's registration fields given with a sign-up request, kept until confirmation. */
  readonly fields: Readonly<Record<string, unknown>>
  /** Wrong codes so far. */
  readonly attempts: number
  readonly created_at: DateTime.Utc
  readonly expires_at: DateTime.Utc
}

/**
 * A wrong code counted against the address's request, as the store decided it in one step. The
 * right code never comes here: it takes the request, and a wrong one changes nothing in that
 * step, so every refusal costs its answer the same (application/EmailSignIn.ts).
 */
export type WrongCodeCount = Data.TaggedEnum<{
  /** Counted, and `attemptsLeft` more may be tried. */
  Counted: { readonly attemptsLeft: number }
  /** Counted, and the last try: the request is gone. */
  Voided: {}
  /** No live request for the address (none, taken, voided or expired): nothing to count. */
  NoRequest: {}
}>
export const WrongCodeCount = Data.taggedEnum<WrongCodeCount>()

/** What a counted wrong code leaves of its request. */
export const afterWrongCode = (attempts: number, maxAttempts: number = MAX_CODE_ATTEMPTS): WrongCodeCount =>
  attempts >= maxAttempts ? WrongCodeCount.Voided() : WrongCodeCount.Counted({ attemptsLeft: maxAttempts - attempts })

/** What a request for an address sends. */
export type RequestDecision = Data.TaggedEnum<{
  /** An active account: a mail that signs it in. */
  SignIn: { readonly user: User }
  /** No account, and EMAIL_SIGN_UP_ENABLED: a mail that creates it on confirmation. */
  SignUp: {}
  /** An inactive account, or an unknown address without sign-up: nothing, answered alike. */
  Nothing: {}
}>
export const RequestDecision = Data.taggedEnum<RequestDecision>()

export const decideRequest = (found: Option.Option<User>, signUpEnabled: boolean): RequestDecision =>
  Option.match(found, {
    onNone: () => (signUpEnabled ? RequestDecision.SignUp() : RequestDecision.Nothing()),
    onSome: (user) => (user.is_active ? RequestDecision.SignIn({ user }) : RequestDecision.Nothing())
  })

/** What a taken request does, with the account its address belongs to now. */
export type ConfirmDecision = Data.TaggedEnum<{
  /**
   * Sign the account in. The mail proved the address: an account that had never proved it loses
   * every way in it held first (docs/behaviour.md, "Ways in"), whoever registered it meanwhile included.
   */
  SignIn: { readonly user: User }
  /** Create the account (verified, no password), then sign it in. */
  SignUp: {}
  /** The account became inactive, or is gone and sign-up is off: the token signs nobody in. */
  Refused: {}
}>
export const ConfirmDecision = Data.taggedEnum<ConfirmDecision>()

export const decideConfirmation = (found: Option.Option<User>, signUpEnabled: boolean): ConfirmDecision =>
  Option.match(found, {
    onNone: () => (signUpEnabled ? ConfirmDecision.SignUp() : ConfirmDecision.Refused()),
    onSome: (user) => (user.is_active ? ConfirmDecision.SignIn({ user }) : ConfirmDecision.Refused())
  })

/** Whether a request stored at some time can still be confirmed at `now`. */
export const isLive = (request: Pick<EmailSignInRequest, "expires_at">, now: DateTime.Utc): boolean =>
  request.expires_at.epochMillis > now.epochMillis
