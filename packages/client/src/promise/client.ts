import type { TokenPair } from "../../../../domain/Token.js"
import type { PortcullisApi } from "../../../../interfaces/http/client.js"
import { csrfToken } from "./csrf.js"
import { errorOf } from "./errors.js"
import { exclusive } from "./lock.js"
import type { Deployment, Routes } from "./routes.js"
import { atRoot, defaultPrefix, routeTable } from "./routeTable.js"
import type { Wire } from "./wire.js"

export interface PromiseClientOptions<D extends Deployment = {}> {
  /** The service's origin (PUBLIC_URL), e.g. `https://auth.example.com`; the auth prefix is added per route. */
  readonly baseUrl: string | URL
  /** The fetch to call (the global one unless given): a test double, or one with an agent of its own. */
  readonly fetch?: typeof globalThis.fetch
  /**
   * The deployment's settings where they differ from the defaults: AUTH_PREFIX (`authPrefix`),
   * and for the body types LOGIN_FIELD (`loginField`) and TOKEN_TRANSPORT (`tokenTransport`).
   */
  readonly shape?: { readonly authPrefix?: string } & Partial<D>
  /**
   * fetch's `credentials`: `"include"` unless told, so that in cookie mode the browser sends and
   * keeps the refresh and CSRF cookies on a page of another origin too (CORS_ORIGINS).
   */
  readonly credentials?: "include" | "same-origin" | "omit"
  /** The Web Lock every refresh of this service holds (one per service origin unless told). */
  readonly lockName?: string
}

/** The tokens the client holds between calls, in memory only. */
export interface Session {
  /** The access token sent as `Authorization: Bearer`, from the latest sign-in or refresh. */
  readonly accessToken: () => string | undefined
  /** The refresh token of bearer mode (cookie mode keeps it in an HttpOnly cookie: undefined). */
  readonly refreshToken: () => string | undefined
  /** Tokens obtained elsewhere (a page load that restores them); `refresh_token` may be null. */
  readonly set: (tokens: { readonly access_token: string; readonly refresh_token?: string | null }) => void
  readonly clear: () => void
}

export type PromiseClient<D extends Deployment = {}> = Routes<PortcullisApi, D> & {
  readonly session: Session
  /**
   * Rotates the session's refresh token (the held one in bearer mode, the cookie in cookie mode)
   * and keeps the new access token. Calls at once in this page share one request, and pages of
   * one origin take turns (Web Locks), so a refresh token is never sent twice.
   */
  readonly refresh: () => Promise<Wire<TokenPair>>
}

interface AnyRequest {
  readonly path?: Readonly<Record<string, unknown>>
  readonly urlParams?: Readonly<Record<string, unknown>>
  readonly payload?: unknown
  readonly headers?: Readonly<Record<string, string>>
  readonly withResponse?: boolean
}

/** One route: its method, and its path with the prefix (`:name` for a path parameter). */
interface Endpoint {
  readonly name: string
  readonly method: string
  readonly path: string
}

const hasBody = (method: string) => method !== "GET" && method !== "HEAD" && method !== "OPTIONS"

const query = (params: Readonly<Record<string, unknown>>) => {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || value === null) continue
    for (const item of Array.isArray(value) ? value : [value]) search.append(name, String(item))
  }
  const text = search.toString()
  return text === "" ? "" : `?${text}`
}

/**
 * The Promise client of a Portcullis service: every route of the HttpApi definition the service
 * serves, with JSON in and out as the OpenAPI document shows it (dates as ISO strings), and every
 * refusal thrown as a `PortcullisError`. It keeps the tokens of the latest sign-in in memory and
 * sends the access token itself; in cookie mode it echoes the CSRF cookie on unsafe requests.
 */
export const createClient = <const D extends Deployment = {}>(options: PromiseClientOptions<D>): PromiseClient<D> => {
  const prefix = options.shape?.authPrefix ?? defaultPrefix
  const base = options.baseUrl.toString().replace(/\/+$/, "")
  const fetch = options.fetch ?? globalThis.fetch.bind(globalThis)
  const credentials = options.credentials ?? "include"
  const lock = exclusive(options.lockName ?? `portcullis-refresh ${base}`)

  let accessToken: string | undefined
  let refreshToken: string | undefined
  /** The X-CSRF-Token of the latest answer: the token of a page that cannot read the cookie. */
  let csrfHeader: string | undefined

  const keep = (body: unknown) => {
    if (typeof body !== "object" || body === null) return
    const tokens = body as { access_token?: unknown; refresh_token?: unknown }
    if (typeof tokens.access_token !== "string") return
    accessToken = tokens.access_token
    refreshToken = typeof tokens.refresh_token === "string" ? tokens.refresh_token : undefined
  }
  const clear = () => {
    accessToken = undefined
    refreshToken = undefined
  }

  const send = async (endpoint: Endpoint, request: AnyRequest = {}) => {
    const path = endpoint.path.replace(/:(\w+)/g, (_, name: string) =>
      encodeURIComponent(String(request.path?.[name] ?? ""))
    )
    const withBody = hasBody(endpoint.method) && request.payload !== undefined && request.payload !== null
    // A route without a body (GET) takes its payload as query parameters, as HttpApi does.
    const params = hasBody(endpoint.method) ? request.urlParams : { ...request.urlParams, ...(request.payload ?? {}) }
    const headers = new Headers({ accept: "application/json, application/problem+json" })
    if (withBody) headers.set("content-type", "application/json")
    if (accessToken !== undefined) headers.set("authorization", `Bearer ${accessToken}`)
    if (hasBody(endpoint.method)) {
      // Cookie mode's double submit: /refresh demands it; other unsafe routes ignore it.
      const csrf = csrfToken() ?? csrfHeader
      if (csrf !== undefined) headers.set("x-csrf-token", csrf)
    }
    for (const [name, value] of Object.entries(request.headers ?? {})) headers.set(name, value)
    const response = await fetch(`${base}${path}${query(params ?? {})}`, {
      method: endpoint.method,
      headers,
      credentials,
      ...(withBody ? { body: JSON.stringify(request.payload) } : {})
    })
    csrfHeader = response.headers.get("x-csrf-token") ?? csrfHeader
    if (!response.ok) throw await errorOf(response)
    const text = await response.text()
    const body: unknown = text === "" ? undefined : JSON.parse(text)
    keep(body)
    return request.withResponse === true ? ([body, response] as const) : body
  }

  const endpointOf = (group: string, name: string, route: string): Endpoint => {
    const [method = "GET", path = "/"] = route.split(" ")
    return { name, method, path: atRoot.includes(group) ? path : `${prefix}${path}` }
  }
  const refreshEndpoint = endpointOf("auth", "refresh", routeTable.auth?.refresh ?? "POST /refresh")
  let inFlight: Promise<unknown> | undefined
  /** The held token, read inside the lock: the one another caller's refresh may just have replaced. */
  const coordinatedRefresh = (request: AnyRequest = {}): Promise<unknown> => {
    inFlight ??= lock(() =>
      send(refreshEndpoint, {
        ...request,
        payload: refreshToken === undefined ? undefined : { refresh_token: refreshToken }
      }).catch((error: unknown) => {
        // A refused refresh token ends the session: nothing held is worth sending again.
        if ((error as { status?: number }).status === 401) clear()
        throw error
      })
    ).finally(() => {
      inFlight = undefined
    })
    return inFlight
  }

  const routes: Record<string, Record<string, (request?: AnyRequest) => Promise<unknown>>> = {}
  for (const [group, endpoints] of Object.entries(routeTable)) {
    const methods: Record<string, (request?: AnyRequest) => Promise<unknown>> = {}
    for (const [name, route] of Object.entries(endpoints)) {
      const endpoint = endpointOf(group, name, route)
      methods[name] = (request) => send(endpoint, request)
    }
    routes[group] = methods
  }
  const auth = routes.auth ?? {}
  // A refresh that names no token of its own spends the session's, so it takes the lock.
  auth.refresh = (request) =>
    request?.payload === undefined || request.payload === null
      ? coordinatedRefresh(request)
      : send(refreshEndpoint, request)
  const logout = auth.logout
  if (logout !== undefined) auth.logout = (request) => logout(request).finally(clear)

  const session: Session = {
    accessToken: () => accessToken,
    refreshToken: () => refreshToken,
    set: keep,
    clear
  }
  // The methods are made from the route table, which the tests hold to the definition the types come from.
  return { ...routes, session, refresh: () => coordinatedRefresh() } as unknown as PromiseClient<D>
}
