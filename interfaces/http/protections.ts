import { type HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Duration, Effect, Option } from "effect"
import { type RateLimitDecision, RateLimiter, type RateLimitRule } from "../../application/ports/RateLimiter.js"
import type { RateLimit } from "../../config/forms.js"
import type { RateLimitBucket, Settings } from "../../config/Settings.js"
import { RateLimitedError } from "../../domain/errors.js"
import { addressBucket, resolveClientAddress } from "./clientAddress.js"
import { respond } from "./middleware.js"
import { problemOf, rateLimitHeaders } from "./problems.js"

/** The settings the request protections read. */
export type ProtectionSettings = Pick<
  Settings,
  | "authPrefix"
  | "trustedProxyHeaders"
  | "trustedProxyCount"
  | "authRateLimitEnabled"
  | "authRateLimits"
  | "globalRateLimit"
>

/**
 * The routes each AUTH_RATE_LIMITS bucket covers, by method and path under the auth prefix. A
 * route is matched here, not on the router, so a route this build does not serve yet is limited
 * the day it arrives.
 */
export const limitedRoutes: ReadonlyArray<{ readonly bucket: RateLimitBucket; readonly path: string }> = [
  { bucket: "login", path: "/login" },
  { bucket: "register", path: "/register" },
  { bucket: "password_reset", path: "/password-reset/request" },
  { bucket: "password_reset", path: "/password-reset/confirm" },
  { bucket: "verify_email", path: "/verify-email/request" },
  { bucket: "verify_email", path: "/verify-email/confirm" },
  { bucket: "passkey_auth", path: "/passkeys/authenticate/begin" },
  { bucket: "passkey_auth", path: "/passkeys/authenticate/complete" },
  { bucket: "refresh", path: "/refresh" },
  { bucket: "oauth_callback", path: "/oauth/:provider/callback" }
]

/** Load balancers probe these from one address; throttling them would take the service out of rotation. */
const unlimitedPaths = new Set(["/healthz", "/readyz"])

const toPattern = (path: string) =>
  new RegExp(
    `^${path
      .toLowerCase()
      .replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
      .replace(/:[a-z_][a-z0-9_]*/g, "[^/]+")}$`
  )

/** Which bucket limits a request, if any, by method and normalised path (`routePath`): all limited routes are POST. */
export const bucketOf = (authPrefix: string) => {
  const table = limitedRoutes.map((route) => ({ bucket: route.bucket, pattern: toPattern(authPrefix + route.path) }))
  return (method: string, path: string): RateLimitBucket | undefined =>
    method.toUpperCase() === "POST" ? table.find((route) => route.pattern.test(path))?.bucket : undefined
}

/**
 * A request target as the router reads it, so that no other spelling of a limited route escapes
 * its bucket: the router ignores case, duplicate and trailing slashes, and whatever follows `?`,
 * `;` or `#`, and decodes percent-escapes. Decoding a little more than the router (`%2F`) can only
 * count a request that finds no route.
 */
export const routePath = (url: string) => {
  let path = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, "")
  const end = path.search(/[?;#]/)
  if (end >= 0) path = path.slice(0, end)
  try {
    path = decodeURIComponent(path)
  } catch {
    // A malformed escape: matched as sent.
  }
  path = path.replace(/\/{2,}/g, "/").toLowerCase()
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path
}

const ruleOf = (limit: RateLimit): RateLimitRule => ({
  limit: limit.count,
  window: Duration.seconds(limit.windowSeconds)
})

/** Whole seconds, rounded up so that a client waiting that long is never early. */
const wholeSeconds = (duration: Duration.Duration) => Math.max(1, Math.ceil(Duration.toMillis(duration) / 1000))

/**
 * Client address and rate limits, ahead of everything else a request meets, body checks and
 * decoding included: every request to a limited route counts, valid or not, until the limit.
 *
 * The client address is resolved once (trusted proxy headers, else the socket) and becomes the
 * request's `remoteAddress` for everything downstream, such as the IP a session records. Each
 * request to a limited route counts against (bucket, client), IPv6 clients by their /64, and with
 * GLOBAL_RATE_LIMIT every request counts against (global, client) too. A refused request is not
 * counted and answers 429; an allowed one carries the RateLimit-* headers of its tightest
 * limit. A rate limiter that fails lets the request through, with a warning (fail open).
 */
export const protections = (settings: ProtectionSettings) =>
  Effect.map(RateLimiter, (limiter) => {
    const proxies = { headers: settings.trustedProxyHeaders, count: settings.trustedProxyCount }
    const routeBucket = bucketOf(settings.authPrefix)
    const globalRule = Option.map(settings.globalRateLimit, ruleOf)
    const bucketRules = new Map(
      Object.entries(settings.authRateLimits).map(([name, limit]) => [name as RateLimitBucket, ruleOf(limit)])
    )

    const hit = (key: string, rule: RateLimitRule) =>
      limiter.hit(key, rule).pipe(
        Effect.map(Option.some),
        Effect.catchAllCause((cause) =>
          Effect.as(
            Effect.logWarning("rate limit skipped: the rate limiter failed", cause),
            Option.none<RateLimitDecision>()
          )
        )
      )

    return (app: HttpApp.Default): HttpApp.Default =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const address = resolveClientAddress(request.headers, Option.getOrUndefined(request.remoteAddress), proxies)
        const client = address === undefined ? "unknown" : addressBucket(address)
        const path = routePath(request.url)

        const checks: Array<{ readonly key: string; readonly rule: RateLimitRule }> = []
        const bucket = settings.authRateLimitEnabled ? routeBucket(request.method, path) : undefined
        const bucketRule = bucket === undefined ? undefined : bucketRules.get(bucket)
        if (bucketRule !== undefined) checks.push({ key: `${bucket}:${client}`, rule: bucketRule })
        if (Option.isSome(globalRule) && !unlimitedPaths.has(path)) {
          checks.push({ key: `global:${client}`, rule: globalRule.value })
        }

        // The route's own bucket first: a request it refuses is not counted against the global limit.
        let tightest: RateLimitDecision | undefined
        for (const check of checks) {
          const decision = yield* hit(check.key, check.rule)
          if (Option.isNone(decision)) continue
          if (!decision.value.allowed) {
            return respond(
              problemOf(
                new RateLimitedError({
                  limit: decision.value.limit,
                  resetSeconds: wholeSeconds(decision.value.resetAfter)
                })
              )
            )
          }
          if (tightest === undefined || decision.value.remaining < tightest.remaining) tightest = decision.value
        }

        const response = yield* address === undefined
          ? app
          : Effect.provideService(app, HttpServerRequest.HttpServerRequest, request.modify({ remoteAddress: address }))
        return tightest === undefined
          ? response
          : HttpServerResponse.setHeaders(
              response,
              rateLimitHeaders(tightest.limit, tightest.remaining, wholeSeconds(tightest.resetAfter))
            )
      })
  })
