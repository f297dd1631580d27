import { Data, DateTime } from "effect"
import { type Client, redirectUriMatches } from "./Client.js"
import { decideRequestedResources, type Resource } from "./Resource.js"

/** The scopes every client may ask for; a client's own are added to them. */
export const standardScopes = ["openid", "profile", "email", "offline_access", "permissions"] as const

/** `prompt` values the provider honours (OIDC Core §3.1.2.1); one account per browser, so select_account asks nothing. */
const promptValues: ReadonlySet<string> = new Set(["none", "login", "consent", "select_account"])

/** An S256 code challenge: the base64url SHA-256 of a verifier, 43 characters (RFC 7636 §4.2). */
const s256Challenge = /^[A-Za-z0-9_-]{43}$/

/** A code verifier: 43 to 128 unreserved characters (RFC 7636 §4.1). */
export const isCodeVerifier = (value: string): boolean => /^[A-Za-z0-9._~-]{43,128}$/.test(value)

/** An authorization request found acceptable, as it is parked while the user signs in or consents. */
export interface AuthorizationRequest {
  readonly client_id: string
  readonly redirect_uri: string
  /** The scopes granted if the user agrees: those asked that the client may have, in the order asked. */
  readonly scopes: ReadonlyArray<string>
  readonly state: string | null
  readonly nonce: string | null
  readonly code_challenge: string
  readonly prompt: ReadonlyArray<string>
  /** Seconds: a sign-in older than this is asked again. */
  readonly max_age: number | null
  readonly login_hint: string | null
  /** The resources (RFC 8707) its tokens are for, normalised; none: tokens for the client itself. */
  readonly resources: ReadonlyArray<string>
}

/** The resources an authorization request names (its `resource` values) and those of them registered. */
export interface AskedResources {
  readonly asked: ReadonlyArray<string>
  /** The registered resource of a normalised URI. */
  readonly registered: (uri: string) => Resource | undefined
}

const noResources: AskedResources = { asked: [], registered: () => undefined }

/** An OAuth error, as the client is told it (RFC 6749 §4.1.2.1). */
export interface OAuthError {
  readonly error: string
  readonly error_description: string
}

export type AuthorizationDecision = Data.TaggedEnum<{
  /**
   * The request cannot be answered at its redirect URI (the client or the URI is not known, or
   * the client registered itself and nobody has yet acted): the browser is shown the error, and
   * is never redirected (RFC 6749 §4.1.2.1, RFC 9700 §4.11.2).
   */
  ErrorPage: OAuthError
  /** Told to the client at its redirect URI, with the request's state and the issuer. */
  RedirectError: OAuthError & { readonly redirect_uri: string; readonly state: string | null }
  Accepted: { readonly request: AuthorizationRequest; readonly client: Client }
}>
export const AuthorizationDecision = Data.taggedEnum<AuthorizationDecision>()

const words = (value: string | undefined) => (value ?? "").split(" ").filter((word) => word !== "")

/**
 * Whether an authorization request (its query or form parameters, first value of each) can go on,
 * for the client it names (`undefined` when no client has that id). Unknown parameters are
 * ignored (OAuth 2.1 §3.1), and so are scopes the client may not have (OIDC Core §3.1.2.1: a tool
 * asking for `groups` still signs its user in, without them). `request` and `request_uri` objects
 * are not supported.
 */
export const decideAuthorization = (
  params: Readonly<Record<string, string | undefined>>,
  client: Client | undefined,
  resources: AskedResources = noResources
): AuthorizationDecision => {
  if (params.client_id === undefined || params.client_id === "")
    return AuthorizationDecision.ErrorPage({ error: "invalid_request", error_description: "client_id is missing" })
  if (client === undefined)
    return AuthorizationDecision.ErrorPage({
      error: "invalid_client",
      error_description: "no client has this client_id"
    })
  const asked = words(params.scope)
  const redirectUri =
    params.redirect_uri ??
    (client.redirect_uris.length === 1 && !asked.includes("openid") ? client.redirect_uris[0] : undefined)
  if (redirectUri === undefined)
    return AuthorizationDecision.ErrorPage({ error: "invalid_request", error_description: "redirect_uri is missing" })
  if (!redirectUriMatches(client.redirect_uris, redirectUri))
    return AuthorizationDecision.ErrorPage({
      error: "invalid_request",
      error_description: "redirect_uri is not one registered for this client"
    })
  const state = params.state ?? null
  const refuse = (error: string, error_description: string): AuthorizationDecision =>
    client.self_registered
      ? AuthorizationDecision.ErrorPage({ error, error_description })
      : AuthorizationDecision.RedirectError({ error, error_description, redirect_uri: redirectUri, state })

  if (params.request !== undefined) return refuse("request_not_supported", "request objects are not supported")
  if (params.request_uri !== undefined) return refuse("request_uri_not_supported", "request_uri is not supported")
  if (params.response_type === undefined || params.response_type === "")
    return refuse("invalid_request", "response_type is missing")
  if (params.response_type !== "code")
    return refuse("unsupported_response_type", "only response_type=code is supported")
  if (params.response_mode !== undefined && params.response_mode !== "query")
    return refuse("invalid_request", "only response_mode=query is supported")
  if (params.code_challenge === undefined || params.code_challenge === "")
    return refuse("invalid_request", "code_challenge is required (PKCE with S256)")
  if (params.code_challenge_method !== "S256") return refuse("invalid_request", "code_challenge_method must be S256")
  if (!s256Challenge.test(params.code_challenge))
    return refuse("invalid_request", "code_challenge is not an S256 challenge (43 base64url characters)")
  const prompt = words(params.prompt)
  if (prompt.some((value) => !promptValues.has(value)))
    return refuse("invalid_request", "prompt takes none, login, consent or select_account")
  if (prompt.includes("none") && prompt.length > 1)
    return refuse("invalid_request", "prompt=none cannot be combined with another value")
  let maxAge: number | null = null
  if (params.max_age !== undefined) {
    if (!/^[0-9]{1,10}$/.test(params.max_age)) return refuse("invalid_request", "max_age must be a number of seconds")
    maxAge = Number(params.max_age)
  }
  const named = decideRequestedResources(resources.asked, (uri) => resources.registered(uri) !== undefined)
  if (named._tag === "InvalidTarget") return refuse("invalid_target", named.error_description)
  // A resource's own scopes may be asked for beside the standard ones and the client's.
  const resourceScopes = named.uris.flatMap((uri) => resources.registered(uri)?.scopes ?? [])
  const allowed = new Set<string>([...standardScopes, ...client.scopes, ...resourceScopes])
  const scopes = [...new Set(asked.filter((scope) => allowed.has(scope)))]
  return AuthorizationDecision.Accepted({
    client,
    request: {
      client_id: client.client_id,
      redirect_uri: redirectUri,
      scopes,
      state,
      nonce: params.nonce ?? null,
      code_challenge: params.code_challenge,
      prompt,
      max_age: maxAge,
      login_hint: params.login_hint ?? null,
      resources: named.uris
    }
  })
}

/** The browser's sign-in, as its session holds it. */
export interface BrowserSignIn {
  readonly user_id: string
  /** When the user last proved themselves (seconds since the epoch). */
  readonly auth_time: number
}

export type NextStep = Data.TaggedEnum<{
  /** The user signs in (again): no sign-in, or `prompt=login`, or one older than `max_age`. */
  SignIn: {}
  /** The user is asked to grant the scopes. */
  Consent: {}
  /** Nothing more to ask: a code is issued for the signed-in user. */
  IssueCode: {}
  /** `prompt=none` and something had to be asked: told to the client instead. */
  Refuse: { readonly error: "login_required" | "consent_required" }
}>
export const NextStep = Data.taggedEnum<NextStep>()

/**
 * What an accepted request needs next, given the browser's sign-in (if any), whether the user
 * already signed in for this very request (so `prompt=login` and `max_age` ask once, not for
 * ever), the scopes the user has consented to for this client, and the time.
 *
 * Consent: a first-party client is never asked; a public client is asked every time, since anyone
 * can present its client_id (RFC 8252 §8.6); a confidential one only for scopes not yet granted,
 * or when `prompt=consent` asks.
 */
export const nextStep = (
  request: AuthorizationRequest,
  client: Client,
  signIn: BrowserSignIn | undefined,
  signedInForThisRequest: boolean,
  consented: ReadonlyArray<string> | undefined,
  now: DateTime.Utc
): NextStep => {
  const none = request.prompt.includes("none")
  const nowSeconds = Math.floor(DateTime.toEpochMillis(now) / 1000)
  const tooOld = signIn !== undefined && request.max_age !== null && nowSeconds - signIn.auth_time > request.max_age
  const mustSignIn = signIn === undefined || (!signedInForThisRequest && (request.prompt.includes("login") || tooOld))
  if (mustSignIn) return none ? NextStep.Refuse({ error: "login_required" }) : NextStep.SignIn()
  const covered = consented !== undefined && request.scopes.every((scope) => consented.includes(scope))
  const mustConsent = !client.first_party && (client.public || !covered || request.prompt.includes("consent"))
  if (mustConsent) return none ? NextStep.Refuse({ error: "consent_required" }) : NextStep.Consent()
  return NextStep.IssueCode()
}
