import { Context, type Effect, type Option, type Redacted } from "effect"
import type { OAuthError, OAuthProviderError } from "../../domain/errors.js"
import type { OAuthUserInfo } from "../../domain/OAuth.js"

/** What a provider's token endpoint granted for an authorization code. */
export interface ProviderTokens {
  readonly access_token: Redacted.Redacted<string>
  readonly refresh_token?: Redacted.Redacted<string>
  /** Seconds the access token lives, when the provider says. */
  readonly expires_in?: number
}

export interface AuthorizationRequest {
  /** The signed state token. */
  readonly state: string
  /** Must be one of the provider's redirect URIs. */
  readonly redirectUri: string
  /**
   * The flow's PKCE code verifier. Only its S256 challenge is sent, and only when the provider
   * uses PKCE.
   */
  readonly codeVerifier: string
}

export interface CodeExchange {
  readonly code: string
  /** The redirect URI the authorization request named. */
  readonly redirectUri: string
  /** The flow's PKCE code verifier; sent only when the provider uses PKCE. */
  readonly codeVerifier: string
}

/** What one exchange with a provider brings: the tokens it granted, and whose they are. */
export interface ProviderIdentity {
  readonly tokens: ProviderTokens
  readonly info: OAuthUserInfo
}

/**
 * One configured provider. Failures: OAuthError when the request is refused (a redirect URI
 * outside the allow-list, a code the provider refuses); OAuthProviderError when the provider
 * cannot be reached in time, redirects, fails or answers something malformed. Neither ever
 * carries a secret or a token.
 */
export interface OAuthProviderClient {
  readonly name: string
  /** The URL to send the browser to, with the provider's scopes and the state. */
  readonly authorizationUrl: (request: AuthorizationRequest) => Effect.Effect<string, OAuthError>
  /**
   * The code exchanged for tokens, then who they belong to (the provider's user info
   * endpoint(s)): one exchange with the provider, bounded as one.
   */
  readonly identify: (exchange: CodeExchange) => Effect.Effect<ProviderIdentity, OAuthError | OAuthProviderError>
}

/** The OAuth providers the deployment configured, by name. */
export class OAuthProviders extends Context.Tag("app/OAuthProviders")<
  OAuthProviders,
  {
    /** The provider names, in configuration order. */
    readonly names: ReadonlyArray<string>
    readonly get: (name: string) => Option.Option<OAuthProviderClient>
  }
>() {}
