import { Either, Option, Redacted, Schema } from "effect"
import {
  isProviderName,
  type OAuthKind,
  type OAuthProviderRegistration,
  oauthKinds
} from "../../domain/OAuthProvider.js"
import * as F from "../forms.js"
import { PREFIX, type SettingsReader } from "../reader.js"

/** Kinds that read the verified email from a call of its own, whose endpoint is configurable too. */
const withEmailsEndpoint: ReadonlySet<OAuthKind> = new Set(["github"])

const CustomProviders = Schema.Array(
  Schema.Struct({
    name: Schema.String.pipe(Schema.filter(isProviderName)),
    authorization_endpoint: Schema.String,
    token_endpoint: Schema.String,
    userinfo_endpoint: Schema.String,
    scopes: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
    // On unless the entry says false: a provider that does not take PKCE is the exception.
    pkce: Schema.optionalWith(Schema.Boolean, { default: () => true }),
    client_id: Schema.String,
    client_secret: Schema.String,
    redirect_uris: Schema.NonEmptyArray(Schema.String),
    claims: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.String }), { default: () => ({}) })
  })
)

/** An endpoint: https anywhere, plain http only on a loopback host (local test providers). */
export const oauthEndpoint: F.Form<string> = {
  expected: "an https:// URL (http:// only on localhost or 127.0.0.1)",
  read: (raw) =>
    Either.flatMap(F.url("http:", "https:").read(raw), (value) =>
      value.protocol === "https:" || ["localhost", "127.0.0.1", "[::1]"].includes(value.hostname)
        ? Either.right(value.href)
        : Either.left("uses plain http on a host that is not loopback")
    )
}

const builtInProvider = (read: SettingsReader, kind: OAuthKind): Option.Option<OAuthProviderRegistration> => {
  const name = `OAUTH_${kind.toUpperCase()}`
  const clientId = read.optional(`${name}_CLIENT_ID`, F.text, {
    doc: "A built-in provider's OAuth client ID; setting it turns the provider on."
  })
  const clientSecret = read.secret(`${name}_CLIENT_SECRET`, { doc: "A built-in provider's OAuth client secret." })
  const redirectUris = read.optional(`${name}_REDIRECT_URIS`, F.list(F.url("http:", "https:")), {
    doc: "A built-in provider's allow-list of callback URLs."
  })
  const scopes = read.optional(`${name}_SCOPES`, F.list(F.text), {
    doc: "Scopes to ask a built-in provider for, instead of its kind's defaults."
  })
  const authorizationEndpoint = read.optional(`${name}_AUTHORIZATION_ENDPOINT`, oauthEndpoint, {
    doc: "Overrides a built-in provider's authorization endpoint (self-hosted GitLab, GitHub Enterprise); https, or http on loopback only."
  })
  const tokenEndpoint = read.optional(`${name}_TOKEN_ENDPOINT`, oauthEndpoint, {
    doc: "Overrides a built-in provider's token endpoint."
  })
  const userinfoEndpoint = read.optional(`${name}_USERINFO_ENDPOINT`, oauthEndpoint, {
    doc: "Overrides a built-in provider's userinfo endpoint."
  })
  const emailsEndpoint = withEmailsEndpoint.has(kind)
    ? read.optional(`${name}_EMAILS_ENDPOINT`, oauthEndpoint, {
        doc: "Overrides GitHub's emails endpoint, where the verified address is read."
      })
    : Option.none()
  if (Option.isNone(clientId)) {
    if (Option.isSome(clientSecret) || Option.isSome(redirectUris)) {
      read.warn(`${PREFIX}${name}_CLIENT_ID is not set, so the other ${PREFIX}${name}_ settings are ignored`)
    }
    return Option.none()
  }
  if (Option.isNone(clientSecret)) {
    read.problem(`${PREFIX}${name}_CLIENT_ID is set without ${PREFIX}${name}_CLIENT_SECRET; expected both`)
  }
  if (Option.isNone(redirectUris) || redirectUris.value.length === 0) {
    read.problem(
      `${PREFIX}${name}_CLIENT_ID is set without ${PREFIX}${name}_REDIRECT_URIS; expected the allowed callback URLs`
    )
  }
  if (Option.isNone(clientSecret) || Option.isNone(redirectUris)) return Option.none()
  return Option.some({
    name: kind,
    kind,
    clientId: clientId.value,
    clientSecret: clientSecret.value,
    redirectUris: redirectUris.value.map((uri) => uri.href),
    scopes,
    authorizationEndpoint,
    tokenEndpoint,
    userinfoEndpoint,
    emailsEndpoint,
    pkce: Option.none(),
    claims: {},
    mapUserInfo: Option.none()
  })
}

const customProviders = (
  read: SettingsReader,
  builtIn: ReadonlyArray<OAuthProviderRegistration>
): ReadonlyArray<OAuthProviderRegistration> => {
  const value = read.optional("OAUTH_CUSTOM_PROVIDERS", F.json, {
    secret: true,
    doc: "A JSON list of standard OAuth 2.0 providers: `{name, authorization_endpoint, token_endpoint, userinfo_endpoint, scopes, pkce, client_id, client_secret, redirect_uris, claims}`; each uses PKCE (S256) unless its `pkce` is `false`."
  })
  if (Option.isNone(value)) return []
  const decoded = Schema.decodeUnknownEither(CustomProviders)(value.value, { onExcessProperty: "error" })
  if (Either.isLeft(decoded)) {
    read.problem(
      `${PREFIX}OAUTH_CUSTOM_PROVIDERS does not fit; expected a JSON list of {name, authorization_endpoint, token_endpoint, userinfo_endpoint, scopes, pkce, client_id, client_secret, redirect_uris, claims}`
    )
    return []
  }
  const providers: Array<OAuthProviderRegistration> = []
  for (const custom of decoded.right) {
    if ([...builtIn, ...providers].some((provider) => provider.name === custom.name)) {
      read.problem(`${PREFIX}OAUTH_CUSTOM_PROVIDERS names ${custom.name} twice; expected unique names`)
      continue
    }
    const endpoints = [custom.authorization_endpoint, custom.token_endpoint, custom.userinfo_endpoint].map(
      oauthEndpoint.read
    )
    const redirects = custom.redirect_uris.map((uri) => Either.map(F.url("http:", "https:").read(uri), String))
    const bad = [...endpoints, ...redirects].find(Either.isLeft)
    if (bad !== undefined) {
      read.problem(
        `${PREFIX}OAUTH_CUSTOM_PROVIDERS gives ${custom.name} an endpoint or redirect URI that ${bad.left}; expected ${oauthEndpoint.expected}`
      )
      continue
    }
    providers.push({
      name: custom.name,
      kind: "custom",
      clientId: custom.client_id,
      clientSecret: Redacted.make(custom.client_secret),
      redirectUris: custom.redirect_uris,
      scopes: Option.some(custom.scopes),
      authorizationEndpoint: Option.some(custom.authorization_endpoint),
      tokenEndpoint: Option.some(custom.token_endpoint),
      userinfoEndpoint: Option.some(custom.userinfo_endpoint),
      emailsEndpoint: Option.none(),
      pkce: Option.some(custom.pkce),
      claims: custom.claims,
      mapUserInfo: Option.none()
    })
  }
  return providers
}

/** Social sign-in: the account rules and every configured provider, built-in or custom. */
export const readOAuth = (read: SettingsReader) => {
  const builtIn = oauthKinds.flatMap((kind) => Option.toArray(builtInProvider(read, kind)))
  return {
    oauthAutoLinkByEmail: read.setting("OAUTH_AUTO_LINK_BY_EMAIL", F.bool, true, {
      doc: "A provider sign-in whose verified email a user holds links to that user (an unverified holder loses its password and sessions first); `false`: refused."
    }),
    oauthStateExpireSeconds: read.setting("OAUTH_STATE_EXPIRE_SECONDS", F.int(30, 3600), 300, {
      doc: "The OAuth state's lifetime."
    }),
    oauthPkceEnabled: read.setting("OAUTH_PKCE_ENABLED", F.bool, true, {
      doc: "PKCE (S256) for the built-in kinds; a custom provider has its own `pkce`."
    }),
    oauthProviders: [...builtIn, ...customProviders(read, builtIn)]
  }
}

export type OAuthSettings = ReturnType<typeof readOAuth>
