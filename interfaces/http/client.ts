import * as Cookies from "@effect/platform/Cookies"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Effect, Option, Ref } from "effect"
import { type ApiShape, baseApi, defaultShape } from "./Api.js"
import { adminGroup } from "./features/admin/group.js"
import { authGroup } from "./features/auth/group.js"
import { emailChangeGroup } from "./features/email-change/group.js"
import { emailSignInGroup } from "./features/email-sign-in/group.js"
import { healthGroup } from "./features/health/group.js"
import { jwksGroup } from "./features/jwks/group.js"
import { oauthGroup } from "./features/oauth/group.js"
import { oidcGroup } from "./features/oidc/group.js"
import { passkeyGroup } from "./features/passkey/group.js"
import { profileGroup } from "./features/profile/group.js"
import { sessionsGroup } from "./features/sessions/group.js"
import { verifyGroup } from "./features/verify/group.js"
import { type ErrorKind, type ProblemBody, problemOf } from "./problems.js"

/**
 * A typed client of Portcullis (`portcullis/client`), made by HttpApiClient from the very group
 * definitions the server serves: every route, its payload and success types, and its declared
 * errors decoded from their problem bodies by `code`. It imports no use case, adapter or
 * composition code (test/http/client-import-graph.test.ts holds it to that).
 *
 * Apps install it as `@portcullis/client` (packages/client), which bundles this module with the
 * definitions it imports; the `portcullis/client` subpath is deprecated, since installing it
 * installs the whole server.
 */

export { PermissionName } from "../../domain/Access.js"
export * from "../../domain/errors.js"
export { FamilyId, SessionCursor, SessionInfo } from "../../domain/Session.js"
export { Email, Me, PublicUser, RoleName } from "../../domain/User.js"
export type { ApiShape } from "./Api.js"
export { CsrfError, HashingQueueFullError } from "./errors.js"
export type { ErrorKind, ProblemBody } from "./problems.js"

/**
 * A refusal the client decoded, as the service answered it: the RFC 9457 body with its `status`,
 * `code`, `title`, `detail` and extension members (`retry_after`, `errors`…). The error values
 * themselves are the domain's kinds and hold only what the domain knows; the rest comes from the
 * same table the service answers from (problems.ts).
 */
export const problemBody = (error: ErrorKind): ProblemBody => problemOf(error).body

/** The cookie a page echoes in the CSRF header, and the header (cookie mode). */
const CSRF_COOKIE = "portcullis_csrf"
const CSRF_HEADER = "x-csrf-token"

/** Every group of the service, shaped as a deployment serves them (the default shape unless told). */
export const portcullisApi = (shape: ApiShape = defaultShape) =>
  baseApi
    .add(authGroup(shape))
    .add(profileGroup(shape))
    .add(verifyGroup(shape))
    .add(sessionsGroup(shape))
    .add(adminGroup(shape))
    .add(oauthGroup(shape))
    .add(passkeyGroup(shape))
    .add(oidcGroup(shape))
    .add(emailSignInGroup(shape))
    .add(emailChangeGroup(shape))
    .add(jwksGroup(shape))
    .add(healthGroup)

/** The API of every group with the default settings and no custom fields: the client's types. */
export const PortcullisApi = portcullisApi()
export type PortcullisApi = typeof PortcullisApi

/** The settings of the deployment a client speaks to, where they differ from the defaults. */
export type ClientShape = Partial<Pick<ApiShape, "authPrefix" | "loginField" | "tokenTransport" | "userIdType">>

export interface ClientOptions {
  /** The service's origin (PUBLIC_URL), e.g. `https://auth.example.com`; the auth prefix is added per route. */
  readonly baseUrl: string | URL
  readonly shape?: ClientShape
  /** The access token sent as `Authorization: Bearer`, read before every request (so a refreshed one is used). */
  readonly accessToken?: () => string | undefined
  /**
   * Where cookies are kept between calls (cookie mode in Node, whose fetch keeps none): every
   * response's cookies go in, every request carries them, and the CSRF cookie is echoed in
   * X-CSRF-Token. Make one with `cookieJar`. In a browser, leave it out and let the browser keep
   * them (`credentials: "include"` on fetch, see the README).
   */
  readonly cookies?: Ref.Ref<Cookies.Cookies>
}

/** An empty cookie jar for `ClientOptions.cookies`. */
export const cookieJar = Ref.make(Cookies.empty)

/** The CSRF cookie a browser page can read (it is not HttpOnly), when running in one. */
const documentCsrfCookie = (): Option.Option<string> => {
  const cookie = globalThis.document?.cookie ?? ""
  for (const pair of cookie.split(";")) {
    const [name, ...value] = pair.trim().split("=")
    if (name === CSRF_COOKIE) return Option.some(decodeURIComponent(value.join("=")))
  }
  return Option.none()
}

const isUnsafe = (method: string) => method !== "GET" && method !== "HEAD" && method !== "OPTIONS"

/**
 * The double submit of cookie mode: an unsafe request echoes the CSRF cookie in X-CSRF-Token
 * (the service demands it on /refresh, which relies on the refresh cookie).
 */
const echoCsrf =
  (cookies: Ref.Ref<Cookies.Cookies> | undefined) =>
  (request: HttpClientRequest.HttpClientRequest): Effect.Effect<HttpClientRequest.HttpClientRequest> => {
    if (!isUnsafe(request.method)) return Effect.succeed(request)
    const token =
      cookies === undefined
        ? Effect.sync(documentCsrfCookie)
        : Effect.map(Ref.get(cookies), (jar) => Cookies.getValue(jar, CSRF_COOKIE))
    return Effect.map(token, (csrf) =>
      Option.match(
        Option.filter(csrf, (value) => value !== ""),
        {
          onNone: () => request,
          onSome: (value) => HttpClientRequest.setHeader(request, CSRF_HEADER, value)
        }
      )
    )
  }

const withAccessToken = (accessToken: (() => string | undefined) | undefined) =>
  HttpClient.mapRequest((request) => {
    const token = accessToken?.()
    return token === undefined ? request : HttpClientRequest.bearerToken(request, token)
  })

/**
 * The client: `client.auth.login({ payload })`, `client.profile.me()`, `client.sessions.list({ urlParams: {} })`…
 * Needs an HttpClient (`FetchHttpClient.layer`). Failures are the route's declared errors
 * (AuthenticationError, RateLimitedError, …), or HttpClientError / ParseError.
 */
export const make = (options: ClientOptions) => {
  const shape = { ...defaultShape, ...options.shape }
  const cookies = options.cookies
  return HttpApiClient.make(portcullisApi(shape), {
    baseUrl: options.baseUrl,
    transformClient: (client) => {
      const authenticated = client.pipe(
        withAccessToken(options.accessToken),
        HttpClient.mapRequestEffect(echoCsrf(cookies))
      )
      return cookies === undefined ? authenticated : HttpClient.withCookiesRef(authenticated, cookies)
    }
  })
}

/** A client of the service, as `make` builds it. */
export type PortcullisClient = Effect.Effect.Success<ReturnType<typeof make>>
