import type { Option, Redacted } from "effect"
import type { OAuthUserInfo } from "./OAuth.js"

/** The built-in provider kinds (spec: OAuth routes), each enabled by its own settings. */
export const oauthKinds = ["google", "github", "discord", "gitlab"] as const
export type OAuthKind = (typeof oauthKinds)[number]

/** Path segments the OAuth routes use themselves, so no provider may be named so. */
const reservedNames: ReadonlySet<string> = new Set(["accounts", "providers"])

/** A provider name: the `{provider}` of the routes, a lowercase identifier that is not one of their own segments. */
export const isProviderName = (name: string): boolean =>
  /^[a-z][a-z0-9_-]{0,31}$/.test(name) && !reservedNames.has(name)

/** Who the user is, as a custom provider's code reads it from its userinfo answer. */
export interface MappedUserInfo {
  readonly provider_user_id: string | number
  readonly email?: string | null
  readonly email_verified?: boolean
  readonly name?: string | null
  readonly picture?: string | null
}

/** OAuthUserInfo but the provider's name, which the registration adds. */
export type ProviderUserFields = Omit<OAuthUserInfo, "provider">

/**
 * One provider as the deployment registers it, from settings (built-in kinds and
 * SERVICE_OAUTH_CUSTOM_PROVIDERS) or from code (a Deployment's `oauthProviders`).
 */
export interface OAuthProviderRegistration {
  readonly name: string
  readonly kind: OAuthKind | "custom"
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  /** The allow-list of callback URLs. */
  readonly redirectUris: ReadonlyArray<string>
  /** Replaces the kind's default scopes. */
  readonly scopes: Option.Option<ReadonlyArray<string>>
  /** Each replaces the kind's default; a custom provider has no defaults and needs all three. */
  readonly authorizationEndpoint: Option.Option<string>
  readonly tokenEndpoint: Option.Option<string>
  readonly userinfoEndpoint: Option.Option<string>
  /** GitHub: where the user's addresses are read. */
  readonly emailsEndpoint: Option.Option<string>
  /** A custom provider's own PKCE flag; the built-in kinds follow OAUTH_PKCE_ENABLED. */
  readonly pkce: Option.Option<boolean>
  /** A custom provider's map from OAuthUserInfo fields to userinfo keys. */
  readonly claims: Readonly<Record<string, string>>
  /** A custom provider's own reading of its userinfo answer, from code; it wins over `claims`. */
  readonly mapUserInfo: Option.Option<(userinfo: Readonly<Record<string, unknown>>) => MappedUserInfo>
}
