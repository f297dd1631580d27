import { Context, type Effect } from "effect"
import type { TokenError, TokenExpiredError } from "../../domain/errors.js"

/** The claims of the provider's access tokens (RFC 9068 §2.2), the issuer's and times left to the signer. */
export interface ProviderAccessClaims {
  /** The user, or the client itself for client_credentials. */
  readonly sub: string
  /** The resource (or resources), or the client_id when none was named (RFC 8707, RFC 9068 §3). */
  readonly aud: string | ReadonlyArray<string>
  readonly client_id: string
  /** Space-separated (RFC 9068 §2.2.3). */
  readonly scope: string
  readonly jti: string
  readonly auth_time?: number
  /** The grant the token was issued from: it is refused once the grant ends. */
  readonly grant_id?: string
}

/** An access token of this issuer, verified. */
export interface VerifiedAccessToken extends ProviderAccessClaims {
  readonly iss: string
  readonly iat: number
  readonly exp: number
}

/**
 * The OpenID Provider's JWTs, signed with its key and published in the JWKS: access tokens (typ
 * `at+jwt`, RFC 9068) and ID tokens (OIDC Core §2). Neither is a token of Portcullis's own
 * routes, whose issuer differs (JWT_ISSUER), so that neither kind is accepted where the other is.
 */
export class ProviderTokens extends Context.Tag("app/ProviderTokens")<
  ProviderTokens,
  {
    readonly issuer: string
    /** Signs an access token living `ttlSeconds`. */
    readonly accessToken: (claims: ProviderAccessClaims, ttlSeconds: number) => Effect.Effect<string>
    /** Signs an ID token for `aud` (the client_id) with the given claims (sub, auth_time, nonce, amr, scope claims…). */
    readonly idToken: (claims: Readonly<Record<string, unknown>>, ttlSeconds: number) => Effect.Effect<string>
    /** An access token of this issuer, its signature, `typ`, `iss` and times checked. */
    readonly verifyAccessToken: (token: string) => Effect.Effect<VerifiedAccessToken, TokenError | TokenExpiredError>
    /**
     * An ID token this provider issued, as end-session takes it (`id_token_hint`): its signature
     * and issuer checked, an expired one accepted (OIDC RP-Initiated Logout §2).
     */
    readonly verifyIdTokenHint: (
      token: string
    ) => Effect.Effect<{ readonly sub: string; readonly aud: ReadonlyArray<string> }, TokenError>
  }
>() {}
