import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Context, Option } from "effect"
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
 * A request's route, resolved once as the pipeline receives it (pipeline.ts) and handed to every
 * step after: CORS, the Origin check, the hashing queue, the rate limits, the body checks, the
 * access log and the metrics.
 */
export interface ResolvedRoute {
  /** The method as sent. */
  readonly method: string
  /** The request target's path as sent, without its query or fragment: what the access log records. */
  readonly target: string
  /** The path as the router reads it (`routePath`). */
  readonly path: string
  /** The route serving it as declared (`/api/v1/auth/sessions/:family_id`), or `unmatched`. */
  readonly id: string
  /** The rate-limit bucket counting it, if any (routes of a kept feature its settings turn off included). */
  readonly bucket: RateLimitBucket | undefined
  /** It hashes a password (HASHING_QUEUE_LIMIT bounds it). */
  readonly hashes: boolean
  /** The methods its path is served under, asked only for a 404 or 405 and a CORS preflight. */
  readonly allowed: () => ReadonlyArray<string>
}

/**
 * A request target as the router reads it, so that no other spelling of a route escapes what its
 * route declares (a bucket, a metric label): the router ignores letter case, duplicate and
 * trailing slashes, and whatever follows `?`, `;` or `#`, and decodes percent-escapes but those
 * of reserved characters (`%2F` stays a part of its segment). The one normalisation of a path.
 */
export const routePath = (url: string) => {
  let path = targetPath(url).split(";", 1)[0] ?? ""
  if (path.includes("%")) {
    try {
      path = decodeURI(path)
    } catch {
      // A malformed escape: matched as sent.
    }
  }
  path = path.replace(/\/{2,}/g, "/").toLowerCase()
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path
}

/**
 * A route path (`/sessions/:family_id`) as a pattern over normalised paths: each parameter
 * stands for one segment.
 */
const routePattern = (path: string) =>
  new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z_][A-Za-z0-9_]*/g, "[^/]+")}$`, "i")

const isParametric = (path: string) => path.includes(":")

/** The method a route is served under: the router answers HEAD with the GET route. */
const servedMethod = (method: string) => {
  const upper = method.toUpperCase()
  return upper === "HEAD" ? "GET" : upper
}

interface Entry {
  readonly method: string
  /** The declared path; undefined for a limited route of a feature the deployment keeps but does not serve. */
  readonly id: string | undefined
  readonly bucket: RateLimitBucket | undefined
  readonly hashes: boolean
  readonly pattern: RegExp
}

/** What a route table knows of the routes served, and of the limited routes counted. */
export interface RouteSources {
  /** The routes mounted beside the API's (docs, OpenAPI, demo, hosted pages, metrics): GET routes. */
  readonly extraGetPaths?: ReadonlyArray<string>
  /**
   * The limited routes of the features the deployment keeps (their paths without the prefix), so
   * that a route answers the same 429 whether its feature's settings turn it on or not.
   */
  readonly limits?: { readonly prefix: string; readonly routes: ReadonlyArray<LimitedRoute> }
}

/** Resolves a request's method and target to its route. */
export type RouteTable = (method: string, url: string) => ResolvedRoute

/**
 * The table of every route: the API's endpoints (their buckets and hashing read off their
 * annotations, `limited` and `hashing` in Api.ts), the GET routes mounted beside them and the
 * limited routes of kept features. Static paths are found by one lookup, parametric ones by
 * their patterns; built once, at start-up.
 */
export const routeTable = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>,
  sources: RouteSources = {}
): RouteTable => {
  const entries: Array<Entry & { readonly path: string }> = []
  const add = (method: string, path: string, id: string | undefined, bucket?: RateLimitBucket, hashes = false) =>
    entries.push({ method: method.toUpperCase(), path, id, bucket, hashes, pattern: routePattern(path) })
  for (const path of sources.extraGetPaths ?? []) add("GET", path, path)
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) =>
      add(
        endpoint.method,
        endpoint.path,
        endpoint.path,
        Option.getOrUndefined(Context.getOption(endpoint.annotations, RateLimitedRoute)),
        Option.isSome(Context.getOption(endpoint.annotations, HashingRoute))
      )
  })
  const { prefix = "", routes: limited = [] } = sources.limits ?? {}
  for (const route of limited) {
    const path = prefix + route.path
    const served = entries.some((entry) => entry.method === route.method.toUpperCase() && entry.path === path)
    if (!served) add(route.method, path, undefined, route.bucket, route.hashes === true)
  }

  const staticPaths = new Map<string, Array<Entry>>()
  const parametric: Array<Entry> = []
  for (const entry of entries) {
    if (isParametric(entry.path)) parametric.push(entry)
    else {
      const key = routePath(entry.path)
      staticPaths.set(key, [...(staticPaths.get(key) ?? []), entry])
    }
  }
  const none: ReadonlyArray<Entry> = []
  /** Every entry whose path matches: the static ones first, as the router prefers them. */
  const matching = (path: string): ReadonlyArray<Entry> => {
    const exact = staticPaths.get(path) ?? none
    const patterned = parametric.filter((entry) => entry.pattern.test(path))
    return patterned.length === 0 ? exact : [...exact, ...patterned]
  }

  return (method, url) => {
    const target = targetPath(url)
    const path = routePath(url)
    const served = servedMethod(method)
    const found = matching(path)
    // The entry of the request's method serves it; without one (a 405), the path's first route names it.
    const named =
      found.find((entry) => entry.method === served && entry.id !== undefined) ??
      found.find((entry) => entry.id !== undefined)
    const counted = found.find((entry) => entry.method === served && entry.bucket !== undefined)
    return {
      method,
      target,
      path,
      id: named?.id ?? UNMATCHED,
      bucket: counted?.bucket,
      hashes: found.some((entry) => entry.method === served && entry.hashes),
      allowed: () => [...new Set(found.flatMap((entry) => (entry.id === undefined ? [] : [entry.method])))]
    }
  }
}
