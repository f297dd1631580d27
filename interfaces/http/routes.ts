import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Chunk, Context, Effect, Option } from "effect"
import type { RateLimitBucket } from "../../config/sections/limits.js"
import { HashingRoute, RateLimitedRoute } from "./Api.js"
import { targetPath } from "./requestShape.js"

/** The route of a path no route serves: one name for all of them, so a scan of random paths adds no metric series. */
export const UNMATCHED = "unmatched"

/** A route a rate-limit bucket counts: its method, and its path under the auth prefix. */
export interface LimitedRoute {
  readonly bucket: RateLimitBucket
  readonly method: string
  readonly path: string
  /** It hashes a password for anyone who asks (sign-in, registration): its queue is bounded (HASHING_QUEUE_LIMIT). */
  readonly hashes?: true
}

/**
 * How a route answers beside the API's JSON and problem+json: the OpenID Provider's protocol
 * routes take form bodies and answer in OAuth's own shapes (`oauth`); those a client calls from
 * any page (token, revoke, introspect) answer CORS `*` without credentials and skip the Origin
 * check (`oauth-open`); the provider's session and consent routes keep the Origin check in every
 * token transport (`browser-bound`), since its cookie is sent by the browser by itself.
 */
export type RouteKind = "oauth" | "oauth-open" | "browser-bound"

/**
 * A request's route, as the platform's router resolved it (every request resolves to one: see
 * `completeRouter`), handed to every step of the pipeline: CORS, the Origin check, the hashing
 * queue, the rate limits, the body checks, the access log and the metrics.
 */
export interface ResolvedRoute {
  /** The method as sent. */
  readonly method: string
  /** The request target's path as sent, without its query or fragment: what the access log records. */
  readonly target: string
  /** The route serving it as declared (`/api/v1/auth/sessions/:family_id`), or `unmatched`. */
  readonly id: string
  /** The rate-limit bucket counting it, if any (routes of a kept feature its settings turn off included). */
  readonly bucket: RateLimitBucket | undefined
  /** It hashes a password (HASHING_QUEUE_LIMIT bounds it). */
  readonly hashes: boolean
  /** The methods its path is served under: a 405's Allow, a CORS preflight's methods. */
  readonly allowed: ReadonlyArray<string>
  /** How it answers beside the API's own, if it does (the provider's routes). */
  readonly kind: RouteKind | undefined
}

/** The methods a path may be asked for that the router would not find; HEAD is GET's. */
const methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const

/** What a route declares beside its handler, by its method and declared path. */
interface Declared {
  readonly bucket: RateLimitBucket | undefined
  readonly hashes: boolean
}

/** The routes mounted beside the API's, and the limited routes of kept features. */
export interface RouteSources {
  /**
   * The limited routes of the features the deployment keeps (their paths without the prefix), so
   * that a route answers the same 429 whether its feature's settings turn it on or not.
   */
  readonly limits?: { readonly prefix: string; readonly routes: ReadonlyArray<LimitedRoute> }
  /** The routes that answer otherwise than the API's, by their path as served. */
  readonly kinds?: ReadonlyMap<string, RouteKind>
}

/** What the pipeline reads of the routes, and how the router is completed: built once, at start-up. */
export interface RouteCatalog {
  /**
   * The route of the request (its method and URL) the router matched to `route` (its
   * RouteContext); without one (a path the router could not read, a malformed escape), unmatched.
   */
  readonly resolve: (
    method: string,
    url: string,
    route: HttpRouter.Route<unknown, unknown> | undefined
  ) => ResolvedRoute
  /** The router with a route for every request (`completeRouter`). */
  readonly complete: <E, R>(
    router: HttpRouter.HttpRouter<E, R>
  ) => HttpRouter.HttpRouter<E | HttpServerError.RouteNotFound, R>
}

const keyOf = (method: string, path: string) => `${method.toUpperCase()} ${path}`

/** A route path (`/sessions/:family_id`) as a pattern over the paths it serves: each parameter one segment. */
const patternOf = (path: string) =>
  new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z_][A-Za-z0-9_]*/g, "[^/]+")}$`, "i")

/**
 * The catalog of the API's routes: each endpoint's bucket and hashing read off its annotations
 * (`limited` and `hashing` in Api.ts), and the limited routes of kept features. Matching is the
 * router's alone; this only looks up what the matched route declared.
 */
export const routeCatalog = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>,
  sources: RouteSources = {}
): RouteCatalog => {
  const declared = new Map<string, Declared>()
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) =>
      declared.set(keyOf(endpoint.method, endpoint.path), {
        bucket: Option.getOrUndefined(Context.getOption(endpoint.annotations, RateLimitedRoute)),
        hashes: Option.isSome(Context.getOption(endpoint.annotations, HashingRoute))
      })
  })
  const { prefix = "", routes: limited = [] } = sources.limits ?? {}
  const kinds: ReadonlyMap<string, RouteKind> = sources.kinds ?? new Map()
  const unserved = limited.filter((route) => !declared.has(keyOf(route.method, prefix + route.path)))
  for (const route of unserved) {
    declared.set(keyOf(route.method, prefix + route.path), { bucket: route.bucket, hashes: route.hashes === true })
  }
  // The methods each path is served under, filled in by `complete` from the router's own routes.
  const served = new Map<string, ReadonlyArray<string>>()
  const none: ReadonlyArray<string> = []

  const notFound = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    Effect.fail(new HttpServerError.RouteNotFound({ request }))
  )

  // The routes that stand for no route: a limited route not served, and every unknown path's.
  const unmatched = new Set(unserved.map((route) => keyOf(route.method, prefix + route.path)))

  return {
    resolve: (method, url, route) => {
      if (route === undefined)
        return {
          method,
          target: targetPath(url),
          id: UNMATCHED,
          bucket: undefined,
          hashes: false,
          allowed: none,
          kind: undefined
        }
      // HEAD is served by GET's handler, so it counts as GET's route (its bucket, its hashing).
      const key = keyOf(route.method === "HEAD" ? "GET" : route.method, route.path)
      const found = declared.get(key)
      return {
        method,
        target: targetPath(url),
        id: unmatched.has(key) ? UNMATCHED : route.path,
        bucket: found?.bucket,
        hashes: found?.hashes ?? false,
        allowed: served.get(route.path) ?? none,
        kind: kinds.get(route.path)
      }
    },
    complete: <E2, R2>(router: HttpRouter.HttpRouter<E2, R2>) => {
      const byPath = new Map<string, Set<string>>()
      for (const route of router.routes) {
        if (route.method === "*") continue
        const held = byPath.get(route.path) ?? new Set<string>()
        held.add(route.method)
        byPath.set(route.path, held)
      }
      for (const [path, held] of byPath) served.set(path, [...held])
      // A limited route the router serves beside the API (the provider's protocol routes) is a route.
      for (const route of unserved) {
        if (byPath.get(prefix + route.path)?.has(route.method.toUpperCase()) === true)
          unmatched.delete(keyOf(route.method, prefix + route.path))
      }
      const parametric = Chunk.toReadonlyArray(router.routes).filter((route) => route.path.includes(":"))
      /** Whether the router already finds a route of `method` for `path`, by a parameter's pattern. */
      const reached = (method: string, path: string) =>
        parametric.some((route) => route.method === method && patternOf(route.path).test(path))
      let completed: HttpRouter.HttpRouter<E2 | HttpServerError.RouteNotFound, R2> = router
      const add = (method: (typeof methods)[number] | "HEAD", path: string) => {
        completed = HttpRouter.route(method)(path as HttpRouter.PathInput, notFound)(completed)
      }
      // A limited route of a feature the deployment keeps but does not serve: its bucket counts
      // it, then it answers as an unknown path does.
      for (const route of unserved) {
        const method = route.method.toUpperCase() as (typeof methods)[number]
        const path = prefix + route.path
        if (byPath.get(path)?.has(method) !== true) {
          add(method, path)
          byPath.set(path, new Set([...(byPath.get(path) ?? []), method]))
        }
      }
      // Every other method of a served path is its route too, answered 405 with the path's
      // methods (RouteNotFound, which the problems step turns into 405 when the path has others),
      // unless a route with a parameter already answers it. HEAD is GET's where GET is served, as
      // the router would read it had the catch-all below not taken HEAD too.
      const getHandlers = new Map<string, HttpRouter.Route.Handler<E2, R2>>(
        Chunk.toReadonlyArray(router.routes).flatMap((route) =>
          route.method === "GET" ? [[route.path, route.handler] as const] : []
        )
      )
      for (const [path, held] of byPath) {
        for (const method of methods) if (!held.has(method) && !reached(method, path)) add(method, path)
        const get = getHandlers.get(path)
        if (get !== undefined) completed = HttpRouter.route("HEAD")(path as HttpRouter.PathInput, get)(completed)
        else if (!reached("GET", path)) add("HEAD", path)
      }
      // Any other path, and any other method: one route for all of them.
      for (const path of byPath.has("/") ? ["/*"] : ["/", "/*"]) {
        completed = HttpRouter.all(completed, path as HttpRouter.PathInput, notFound)
        unmatched.add(keyOf("*", path))
      }
      return completed
    }
  }
}
