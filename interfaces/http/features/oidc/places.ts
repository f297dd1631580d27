import type { AuthorizeOutcome } from "../../../../application/oidc/Authorize.js"
import { standardScopes } from "../../../../domain/oidc/Authorization.js"
import { hostedPolicy } from "../../hosted/hosted.js"
import type { LimitedRoute, RouteKind } from "../../routes.js"
import type { BrowserOptions } from "./browser.js"
import type { ProviderPageOptions } from "./pages.js"

/** Where the provider lives, as its routes and discovery name it. */
export interface ProviderPlaces extends BrowserOptions {
  /** The issuer, without a trailing slash. */
  readonly issuer: string
  /** PUBLIC_URL without a trailing slash: the routes' absolute base. */
  readonly base: string
  readonly product: string
  /** The hosted sign-in and consent pages (HOSTED_PAGES), or none: the deployment's own screens. */
  readonly pages?: ProviderPageOptions | undefined
  /** OIDC_DYNAMIC_REGISTRATION: POST /oauth2/register is served and advertised. */
  readonly dynamicRegistration?: boolean
  /** OIDC_CLIENT_METADATA_DOCUMENTS: a client_id may be its metadata document's URL. */
  readonly metadataDocuments?: boolean
  /** Bucket oidc_register, which metadata documents' fetches count in too; none with rate limits off. */
  readonly registerLimit?: { readonly count: number; readonly windowSeconds: number } | undefined
}

/** The provider's protocol routes' paths, under the auth prefix, and the discovery paths (RFC 8414 §3.1). */
export const providerPaths = (places: Pick<ProviderPlaces, "authPrefix" | "issuer">) => {
  const at = `${places.authPrefix}/oauth2`
  const issuerPath = new URL(places.issuer).pathname.replace(/\/+$/, "")
  return {
    authorize: `${at}/authorize`,
    token: `${at}/token`,
    userinfo: `${at}/userinfo`,
    revoke: `${at}/revoke`,
    introspect: `${at}/introspect`,
    register: `${at}/register`,
    endSession: `${at}/end-session`,
    signIn: `${at}/sign-in`,
    consent: `${at}/consent`,
    session: `${at}/session`,
    pageScript: `${at}/pages.js`,
    pageStyles: `${at}/pages.css`,
    webauthnScript: `${at}/webauthn.js`,
    openidConfiguration: `${issuerPath}/.well-known/openid-configuration`,
    authorizationServer: `/.well-known/oauth-authorization-server${issuerPath}`
  }
}

/**
 * The pages' own policy (the hosted pages'): script, styles and calls from this origin, no
 * framing; images from LOGO_URL's origin only, when one is set.
 */
export const providerPagePolicies = (
  paths: ReturnType<typeof providerPaths>,
  logoUrl?: string
): ReadonlyMap<string, string> => {
  const policy = logoUrl === undefined ? hostedPolicy : `${hostedPolicy}; img-src ${new URL(logoUrl).origin}`
  return new Map([
    [paths.signIn, policy],
    [paths.consent, policy]
  ])
}

/**
 * Where an authorization's outcome sends the browser: back to the app, or to the sign-in or
 * consent page with the parked request's id. An error page goes nowhere.
 */
export const locationOf = (places: ProviderPlaces, outcome: AuthorizeOutcome): string | undefined => {
  const paths = providerPaths(places)
  const page = (path: string, request: string) => `${places.base}${path}?${new URLSearchParams({ request })}`
  switch (outcome._tag) {
    case "Redirect":
      return outcome.location
    case "SignIn":
      return page(paths.signIn, outcome.request)
    case "Consent":
      return page(paths.consent, outcome.request)
    case "ErrorPage":
      return undefined
  }
}

/** How each protocol route answers (routes.ts): forms and OAuth shapes; token, revoke and introspect for any page. */
export const providerRouteKinds = (paths: ReturnType<typeof providerPaths>): ReadonlyMap<string, RouteKind> =>
  new Map<string, RouteKind>([
    [paths.authorize, "oauth"],
    [paths.userinfo, "oauth"],
    [paths.endSession, "oauth"],
    [paths.token, "oauth-open"],
    [paths.revoke, "oauth-open"],
    [paths.introspect, "oauth-open"],
    [paths.register, "oauth-open"],
    [paths.consent, "browser-bound"],
    [paths.session, "browser-bound"]
  ])

export const noStore = { "cache-control": "no-store", pragma: "no-cache" }

/** The discovery document (OIDC Discovery §3, RFC 8414 §2): what is really supported. */
export const discoveryDocument = (places: ProviderPlaces) => {
  const paths = providerPaths(places)
  const url = (path: string) => `${places.base}${path}`
  return {
    issuer: places.issuer,
    authorization_endpoint: url(paths.authorize),
    token_endpoint: url(paths.token),
    userinfo_endpoint: url(paths.userinfo),
    jwks_uri: url(`${places.authPrefix}/.well-known/jwks.json`),
    revocation_endpoint: url(paths.revoke),
    introspection_endpoint: url(paths.introspect),
    end_session_endpoint: url(paths.endSession),
    ...(places.dynamicRegistration === true ? { registration_endpoint: url(paths.register) } : {}),
    scopes_supported: standardScopes,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token", "client_credentials"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: ["RS256"],
    token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "none"],
    revocation_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "none"],
    introspection_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
    code_challenge_methods_supported: ["S256"],
    claims_supported: [
      "iss",
      "sub",
      "aud",
      "exp",
      "iat",
      "auth_time",
      "nonce",
      "amr",
      "azp",
      "email",
      "email_verified",
      "roles",
      "permissions"
    ],
    prompt_values_supported: ["none", "login", "consent"],
    authorization_response_iss_parameter_supported: true,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    claims_parameter_supported: false,
    ...(places.metadataDocuments === true ? { client_id_metadata_document_supported: true } : {})
  }
}

/** The protocol routes a bucket counts (they are served beside the API, so no endpoint declares them). */
export const protocolLimits: ReadonlyArray<LimitedRoute> = [
  { bucket: "oidc_token", method: "POST", path: "/oauth2/token" },
  { bucket: "oidc_authorize", method: "GET", path: "/oauth2/authorize" },
  { bucket: "oidc_authorize", method: "POST", path: "/oauth2/authorize" },
  { bucket: "oidc_register", method: "POST", path: "/oauth2/register" }
]
