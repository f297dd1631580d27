import { DateTime, Duration, Either, Option, Schema } from "effect"
import { TokenError, TokenExpiredError } from "./errors.js"
import { exampleOf } from "./examples.js"
import { PublicUser } from "./User.js"

/**
 * What a token is for. Every signed token carries its purpose in `type`, and a token is only
 * ever accepted where its own purpose is expected: a password-reset token is not an access
 * token, a refresh token cannot call /me.
 */
export const TokenPurpose = Schema.Literal(
  "access",
  "refresh",
  "verify_email",
  "password_reset",
  "oauth_state",
  "oauth_link_state",
  "email_change",
  "provider_session"
)
export type TokenPurpose = typeof TokenPurpose.Type

/** The claims of a signed token (JWT). Times are seconds since the epoch. */
export const TokenPayload = Schema.Struct({
  sub: Schema.String,
  exp: Schema.Int,
  iat: Schema.Int,
  jti: Schema.String,
  type: TokenPurpose,
  roles: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  /**
   * Access tokens: the permissions the roles granted at issue time, informational like `roles`
   * (GET /me and the checks read the store). Tokens issued before the claim existed have none.
   */
  permissions: Schema.optional(Schema.Array(Schema.String)),
  extra: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.Unknown }), { default: () => ({}) }),
  family_id: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  /**
   * Access tokens: when the session's sign-in happened (seconds since the epoch), kept across
   * refreshes, so that adding a way in can ask for a recent one (RFC 9470). Tokens issued before
   * the claim existed have none, and count as an old sign-in.
   */
  auth_time: Schema.optional(Schema.Int),
  iss: Schema.String,
  aud: Schema.optional(Schema.Union(Schema.String, Schema.Array(Schema.String))),
  /** verify_email: the address the token verifies; email_change: the address the account moves to. */
  email: Schema.optional(Schema.String),
  /** email_change: the credential version the request saw, so that the token works once. */
  ver: Schema.optional(Schema.Int),
  /** password_reset: fingerprint of the password hash the token may replace, so it works once. */
  pwd: Schema.optional(Schema.String),
  /** OAuth states: hex SHA-256 of the binding the client keeps. */
  binding_digest: Schema.optional(Schema.String),
  /** OAuth states: the flow's random nonce, from which its PKCE verifier is derived. */
  nonce: Schema.optional(Schema.String),
  /** OAuth states: the provider the flow was started with. */
  provider: Schema.optional(Schema.String),
  /** OAuth states: the callback URL the authorization request named, which the code exchange repeats. */
  redirect_uri: Schema.optional(Schema.String),
  /** provider_session: how the browser's user signed in (RFC 8176), for the provider's ID tokens. */
  amr: Schema.optional(Schema.Array(Schema.String)),
  /** OAuth link states: the user who started the link; never the subject, so it is never a sign-in. */
  link_user_id: Schema.optional(Schema.String)
})
export type TokenPayload = typeof TokenPayload.Type

/** What a use case asks to sign; the signer stamps the issuer and audience. */
export type TokenClaims = Omit<TokenPayload, "iss" | "aud" | "roles" | "extra" | "family_id"> &
  Partial<Pick<TokenPayload, "roles" | "extra" | "family_id">>

/** Issued-at and expiry for a token issued `now` that lives `ttl`. */
export const tokenWindow = (
  now: DateTime.Utc,
  ttl: Duration.Duration
): { readonly iat: number; readonly exp: number } => {
  const iat = Math.floor(DateTime.toEpochMillis(now) / 1000)
  return { iat, exp: iat + Math.floor(Duration.toSeconds(ttl)) }
}

export interface ClaimExpectations {
  readonly purpose: TokenPurpose
  readonly issuer: string
  readonly audience: Option.Option<string>
  readonly now: DateTime.Utc
  /** Clock skew tolerated between machines, in seconds; never on the expiry of an exact lifetime. */
  readonly leewaySeconds: number
}

/** Purposes whose tokens belong to a session: they are refused without one, for it is what ends them. */
const sessionPurposes: ReadonlySet<TokenPurpose> = new Set(["access", "refresh"])

/**
 * Purposes whose lifetime is exact: an OAuth state is good for OAUTH_STATE_EXPIRE_SECONDS and
 * not a second more, for a state and its binding caught in flight are a sign-in to finish, and
 * the window the deployment set is all the window it gets.
 */
const exactLifetimes: ReadonlySet<TokenPurpose> = new Set(["oauth_state", "oauth_link_state"])

/** The refusal of a token of another purpose than the one expected, which names the expected one. */
export const wrongPurpose = (expected: TokenPurpose) =>
  new TokenError({ message: `Expected a token of type ${expected}.` })

/**
 * The one rule for accepting a token whose signature is valid: right purpose, right issuer and
 * audience, a session for session tokens, not issued in the future, not expired. A token is
 * expired from the instant `exp + leeway` is reached (RFC 7519: the current time must be before
 * `exp`); one of an exact lifetime from `exp` itself.
 */
export const checkClaims = (
  payload: TokenPayload,
  expect: ClaimExpectations
): Either.Either<TokenPayload, TokenError | TokenExpiredError> => {
  if (payload.type !== expect.purpose) return Either.left(wrongPurpose(expect.purpose))
  if (payload.iss !== expect.issuer) return Either.left(new TokenError({ message: "Unknown token issuer." }))
  if (Option.isSome(expect.audience)) {
    const audiences = payload.aud === undefined ? [] : typeof payload.aud === "string" ? [payload.aud] : payload.aud
    if (!audiences.includes(expect.audience.value)) {
      return Either.left(new TokenError({ message: "The token is not meant for this audience." }))
    }
  }
  const nowMillis = DateTime.toEpochMillis(expect.now)
  const leewayMillis = expect.leewaySeconds * 1000
  if (payload.iat * 1000 > nowMillis + leewayMillis) {
    return Either.left(new TokenError({ message: "The token was issued in the future." }))
  }
  const expiryLeewayMillis = exactLifetimes.has(payload.type) ? 0 : leewayMillis
  if (nowMillis >= payload.exp * 1000 + expiryLeewayMillis) return Either.left(new TokenExpiredError())
  // The service never signs a NUL into an identifier, and no store could look one up (PostgreSQL
  // refuses NUL in text): a token that holds one is refused here, not by a store failing on it.
  if ([payload.sub, payload.jti, payload.family_id, payload.link_user_id].some((id) => id?.includes("\u0000"))) {
    return Either.left(new TokenError({ message: "The token's identifiers are not valid." }))
  }
  if (sessionPurposes.has(payload.type) && payload.family_id === null) {
    return Either.left(new TokenError({ message: "The token belongs to no session." }))
  }
  return Either.right(payload)
}

/** An access token and, outside cookie mode, the refresh token that renews it. */
export const TokenPair = Schema.Struct({
  access_token: Schema.String,
  refresh_token: Schema.NullOr(Schema.String),
  token_type: Schema.Literal("bearer"),
  expires_in: Schema.Int
}).annotations({
  identifier: "TokenPair",
  // Cut short: a whole signed token in the document would be one anybody could try.
  examples: [
    {
      access_token: "eyJhbGciOiJIUzI1NiIsInR5cCI6ImF0K2p3dCJ9…",
      refresh_token: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ0eXBlIjoicmVmcmVzaCJ9…",
      token_type: "bearer",
      expires_in: 900
    }
  ]
})
export type TokenPair = typeof TokenPair.Type

/** What every successful sign-in answers: the token pair and the full user. */
export const LoginResponse = Schema.Struct({ ...TokenPair.fields, user: PublicUser }).annotations({
  identifier: "LoginResponse",
  examples: [{ ...exampleOf(TokenPair), user: exampleOf(PublicUser) }]
})
export type LoginResponse = typeof LoginResponse.Type
