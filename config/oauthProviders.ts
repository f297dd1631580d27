import { Either, Option, Redacted } from "effect"
import { isProviderName, type MappedUserInfo, type OAuthProviderRegistration } from "../domain/OAuthProvider.js"
import * as F from "./forms.js"
import { PREFIX } from "./reader.js"
import type { Settings } from "./Settings.js"
import { oauthEndpoint } from "./sections/oauth.js"

/**
 * A provider following the standard authorization-code flow, added in code (a Deployment's
 * `oauthProviders`): what SERVICE_OAUTH_CUSTOM_PROVIDERS takes, with the userinfo mapping as a
 * function instead of a map of keys.
 */
export interface CustomOAuthProvider {
  /** The `{provider}` of the routes: lowercase letters, digits, `-` and `_`. */
  readonly name: string
  readonly authorization_endpoint: string
  readonly token_endpoint: string
  readonly userinfo_endpoint: string
  readonly scopes?: ReadonlyArray<string>
  /** PKCE S256: on unless `false`, for a provider that does not take it. */
  readonly pkce?: boolean
  readonly client_id: string
  readonly client_secret: string
  /** The allow-list of callback URLs. */
  readonly redirect_uris: ReadonlyArray<string>
  /**
   * Who the user is, from the userinfo endpoint's JSON object. Without it the keys are `sub`
   * (or `id`), `email`, `email_verified`, `name` and `picture`. `email_verified` must be true
   * only when the provider vouches for the address: it decides auto-linking.
   */
  readonly userInfo?: (userinfo: Readonly<Record<string, unknown>>) => MappedUserInfo
}

const keys = [
  "name",
  "authorization_endpoint",
  "token_endpoint",
  "userinfo_endpoint",
  "scopes",
  "pkce",
  "client_id",
  "client_secret",
  "redirect_uris",
  "userInfo"
] as const

const isStrings = (value: unknown): value is ReadonlyArray<string> =>
  Array.isArray(value) && value.every((item) => typeof item === "string")

const providerProblems = (value: unknown, at: string): ReadonlyArray<string> => {
  if (typeof value !== "object" || value === null) return [`${at} is not an object`]
  const provider = value as { readonly [K in (typeof keys)[number]]?: unknown }
  const problems = Object.keys(value)
    .filter((key) => !(keys as ReadonlyArray<string>).includes(key))
    .map((key) => `${at}.${key} is not a provider option (expected: ${keys.join(", ")})`)
  if (typeof provider.name !== "string" || !isProviderName(provider.name)) {
    problems.push(`${at}.name is not a provider name (a-z, 0-9, - and _, at most 32, not accounts or providers)`)
  }
  for (const key of ["authorization_endpoint", "token_endpoint", "userinfo_endpoint"] as const) {
    const read = typeof provider[key] === "string" ? oauthEndpoint.read(provider[key]) : Either.left("is missing")
    if (Either.isLeft(read)) problems.push(`${at}.${key} ${read.left}; expected ${oauthEndpoint.expected}`)
  }
  for (const key of ["client_id", "client_secret"] as const) {
    if (typeof provider[key] !== "string" || provider[key] === "")
      problems.push(`${at}.${key} is not a non-empty string`)
  }
  const redirects = provider.redirect_uris
  if (
    !isStrings(redirects) ||
    redirects.length === 0 ||
    redirects.some((uri) => Either.isLeft(F.url("http:", "https:").read(uri)))
  ) {
    problems.push(`${at}.redirect_uris is not a non-empty list of http(s) URLs`)
  }
  if (provider.scopes !== undefined && !isStrings(provider.scopes))
    problems.push(`${at}.scopes is not a list of strings`)
  if (provider.pkce !== undefined && typeof provider.pkce !== "boolean") problems.push(`${at}.pkce is not a boolean`)
  if (provider.userInfo !== undefined && typeof provider.userInfo !== "function") {
    problems.push(`${at}.userInfo is not a function`)
  }
  return problems
}

/** Why a deployment's `oauthProviders` is not a list of providers, one line per problem. */
export const customProviderProblems = (value: unknown): ReadonlyArray<string> => {
  if (value === undefined) return []
  if (!Array.isArray(value)) return ["oauthProviders is not a list"]
  const problems = value.flatMap((provider, index) => providerProblems(provider, `oauthProviders[${index}]`))
  const names = value.map((provider) => (provider as { readonly name?: unknown }).name)
  for (const [index, name] of names.entries()) {
    if (names.indexOf(name) !== index)
      problems.push(`oauthProviders names ${String(name)} twice; expected unique names`)
  }
  return problems
}

const registrationOf = (provider: CustomOAuthProvider): OAuthProviderRegistration => ({
  name: provider.name,
  kind: "custom",
  clientId: provider.client_id,
  clientSecret: Redacted.make(provider.client_secret),
  redirectUris: provider.redirect_uris,
  scopes: Option.some(provider.scopes ?? []),
  authorizationEndpoint: Option.some(provider.authorization_endpoint),
  tokenEndpoint: Option.some(provider.token_endpoint),
  userinfoEndpoint: Option.some(provider.userinfo_endpoint),
  emailsEndpoint: Option.none(),
  pkce: Option.some(provider.pkce ?? true),
  claims: {},
  mapUserInfo: Option.fromNullable(provider.userInfo)
})

/** Every provider of the deployment: the settings' (built-in kinds, then custom ones), then the code's. */
export const oauthProviders = (
  settings: Settings,
  deployment: { readonly oauthProviders?: ReadonlyArray<CustomOAuthProvider> }
): ReadonlyArray<OAuthProviderRegistration> => [
  ...settings.oauth.oauthProviders,
  ...(deployment.oauthProviders ?? []).map(registrationOf)
]

/** Providers the code names as the settings already do: start-up refuses them rather than pick one. */
export const providerClashes = (
  settings: Settings,
  deployment: { readonly oauthProviders?: ReadonlyArray<CustomOAuthProvider> }
): ReadonlyArray<string> => {
  const configured = new Set(settings.oauth.oauthProviders.map((provider) => provider.name))
  return (deployment.oauthProviders ?? [])
    .filter((provider) => configured.has(provider.name))
    .map(
      (provider) =>
        `oauthProviders names ${provider.name}, which the ${PREFIX}OAUTH_ settings configure already; expected one of them`
    )
}
