import { Duration, Schema } from "effect"

/**
 * The named error kinds of the specification. They say what went wrong in the language of the
 * domain; only interfaces/http turns them into statuses. `message` is a sentence a client may
 * show; it never carries a secret. Kinds without a message get their sentence from the
 * interface that renders them.
 */

/** Sign-in failed. One kind, one sentence, whatever the cause, so failures tell nothing. */
export class AuthenticationError extends Schema.TaggedError<AuthenticationError>()("AuthenticationError", {}) {}

/**
 * The caller proved who they are with a token but must prove it again with a password
 * (change-password's current_password), and that proof failed.
 */
export class ReauthenticationError extends Schema.TaggedError<ReauthenticationError>()("ReauthenticationError", {}) {}

/**
 * Adding a way in (a passkey, a linked provider, a first password) needs a recent sign-in, and
 * the session's is older than `maxAgeSeconds` (or unknown): sign in again, then retry (RFC 9470).
 */
export class ReauthenticationRequiredError extends Schema.TaggedError<ReauthenticationRequiredError>()(
  "ReauthenticationRequiredError",
  { maxAgeSeconds: Schema.Int }
) {}

/**
 * The user's ways in changed (their credential version moved) between the moment this request
 * read them and its own change or sign-in: another change won. A sign-in answers it as any failed
 * sign-in; a change of a way in as a conflict to retry.
 */
export class CredentialsChangedError extends Schema.TaggedError<CredentialsChangedError>()(
  "CredentialsChangedError",
  {}
) {}

/** The caller is known but not allowed: not superuser, not verified, missing a role. */
export class AuthorizationError extends Schema.TaggedError<AuthorizationError>()("AuthorizationError", {
  message: Schema.String
}) {}

/** A token that is malformed, forged, of another purpose, or whose subject is gone. */
export class TokenError extends Schema.TaggedError<TokenError>()("TokenError", {
  message: Schema.String
}) {}

export class TokenExpiredError extends Schema.TaggedError<TokenExpiredError>()("TokenExpiredError", {}) {}

/**
 * A mailed sign-in code that signs nobody in: wrong, or no request is pending for the address
 * (none, used, voided after five wrong codes, expired). One answer for all, so that it tells
 * nothing of whether the address has an account.
 */
export class SignInCodeError extends Schema.TaggedError<SignInCodeError>()("SignInCodeError", {}) {}

/** A token that was revoked: logged out, its session ended, or its family burned by reuse. */
export class TokenBlacklistedError extends Schema.TaggedError<TokenBlacklistedError>()("TokenBlacklistedError", {
  message: Schema.String
}) {}

export class UserAlreadyExistsError extends Schema.TaggedError<UserAlreadyExistsError>()(
  "UserAlreadyExistsError",
  {}
) {}

export class UserNotFoundError extends Schema.TaggedError<UserNotFoundError>()("UserNotFoundError", {}) {}

/**
 * No live session of the caller's has this id: unknown, ended, expired, or someone else's. One
 * kind for all, so that nobody learns about another user's sessions.
 */
export class SessionNotFoundError extends Schema.TaggedError<SessionNotFoundError>()("SessionNotFoundError", {}) {}

/** The password policy refused a password; every broken rule is listed. */
export class InvalidPasswordError extends Schema.TaggedError<InvalidPasswordError>()("InvalidPasswordError", {
  problems: Schema.NonEmptyArray(Schema.String)
}) {}

export class AccountLockedError extends Schema.TaggedError<AccountLockedError>()("AccountLockedError", {
  retryAfterSeconds: Schema.Int
}) {}

/**
 * Too many requests from one client (IP address, or IPv6 /64) to a rate-limited route. Not one
 * of the spec's named kinds: the HTTP interface answers it before any use case runs.
 */
export class RateLimitedError extends Schema.TaggedError<RateLimitedError>()("RateLimitedError", {
  limit: Schema.Int,
  resetSeconds: Schema.Int
}) {}

/**
 * A store the request needs (database, cache) did not answer. Requests fail with it instead of
 * crashing, and succeed again once the store is back.
 */
export class StoreUnavailableError extends Schema.TaggedError<StoreUnavailableError>()("StoreUnavailableError", {
  store: Schema.String
}) {}

export const FieldProblem = Schema.Struct({ path: Schema.String, message: Schema.String })
export type FieldProblem = typeof FieldProblem.Type

/** Input that is well-formed JSON but not acceptable: wrong types, missing or forbidden fields. */
export class ValidationError extends Schema.TaggedError<ValidationError>()("ValidationError", {
  message: Schema.String,
  errors: Schema.Array(FieldProblem)
}) {}

/** An OAuth flow was refused: bad or replayed state, binding mismatch, refused sign-in. */
export class OAuthError extends Schema.TaggedError<OAuthError>()("OAuthError", {
  message: Schema.String
}) {}

/** The OAuth provider could not be reached or answered nonsense. */
export class OAuthProviderError extends Schema.TaggedError<OAuthProviderError>()("OAuthProviderError", {
  message: Schema.String
}) {}

/** The provider identity is linked to another user; it is never moved. */
export class OAuthAccountAlreadyLinkedError extends Schema.TaggedError<OAuthAccountAlreadyLinkedError>()(
  "OAuthAccountAlreadyLinkedError",
  {}
) {}

/** The user already linked a different account of this provider. */
export class OAuthProviderAlreadyLinkedError extends Schema.TaggedError<OAuthProviderAlreadyLinkedError>()(
  "OAuthProviderAlreadyLinkedError",
  {}
) {}

/** No provider of this name is configured. */
export class OAuthProviderNotFoundError extends Schema.TaggedError<OAuthProviderNotFoundError>()(
  "OAuthProviderNotFoundError",
  {}
) {}

/** The user has linked no account of this provider. */
export class LinkedAccountNotFoundError extends Schema.TaggedError<LinkedAccountNotFoundError>()(
  "LinkedAccountNotFoundError",
  {}
) {}

/** Removing this way to sign in (a linked provider, a passkey) would leave the user none. */
export class LastSignInMethodError extends Schema.TaggedError<LastSignInMethodError>()("LastSignInMethodError", {}) {}

/**
 * The OpenID Provider's parked authorization request is unknown, expired or answered already:
 * the app must start its sign-in again.
 */
export class AuthorizationRequestGoneError extends Schema.TaggedError<AuthorizationRequestGoneError>()(
  "AuthorizationRequestGoneError",
  {}
) {}

/** No passkey of the caller's has this id: unknown and another user's alike. */
export class PasskeyNotFoundError extends Schema.TaggedError<PasskeyNotFoundError>()("PasskeyNotFoundError", {}) {}

/**
 * A passkey registration was refused: its challenge unknown, expired, spent or issued to another
 * user, its attestation not verified (origin, RP ID, challenge, user verification), or its
 * credential registered already. One answer for all; the cause is logged.
 */
export class PasskeyRegistrationError extends Schema.TaggedError<PasskeyRegistrationError>()(
  "PasskeyRegistrationError",
  {}
) {}

/** The spec's OAuthError base: every OAuth failure kind. */
export type OAuthFailure =
  | OAuthError
  | OAuthProviderError
  | OAuthAccountAlreadyLinkedError
  | OAuthProviderAlreadyLinkedError

/** The spec's FullAuthError base: every named error kind. */
export type FullAuthError =
  | AuthenticationError
  | ReauthenticationError
  | ReauthenticationRequiredError
  | CredentialsChangedError
  | AuthorizationError
  | TokenError
  | TokenExpiredError
  | TokenBlacklistedError
  | SignInCodeError
  | UserAlreadyExistsError
  | UserNotFoundError
  | SessionNotFoundError
  | InvalidPasswordError
  | AccountLockedError
  | ValidationError
  | OAuthFailure
  | OAuthProviderNotFoundError
  | LinkedAccountNotFoundError
  | LastSignInMethodError
  | PasskeyNotFoundError
  | PasskeyRegistrationError
  | AuthorizationRequestGoneError

/** A wait in whole seconds, rounded up so that a client retrying then is never early. */
export const wholeSeconds = (duration: Duration.Duration) => Math.max(1, Math.ceil(Duration.toMillis(duration) / 1000))
