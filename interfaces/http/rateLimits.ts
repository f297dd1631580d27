import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Duration, Effect, Metric, Option } from "effect"
import { type RateLimitDecision, RateLimiter, type RateLimitRule } from "../../application/ports/RateLimiter.js"
import type { RateLimit } from "../../config/forms.js"
import type { Settings } from "../../config/Settings.js"
import type { RateLimitBucket } from "../../config/sections/limits.js"
import { RateLimitedError, wholeSeconds } from "../../domain/errors.js"
import { addressBucket } from "./clientAddress.js"
import type { LimitedRoute } from "./Feature.js"
import { withHeaders } from "./headers.js"
import { rateLimitRefusals } from "./metrics.js"
import { respond } from "./middleware.js"
import { problemOf, rateLimitHeaders } from "./problems.js"
import { targetPath } from "./requestShape.js"
import { routePattern } from "./routePattern.js"

/** Load balancers probe these from one address; throttling them would take the service out of rotation. */
export const unlimitedPaths: ReadonlySet<string> = new Set(["/healthz", "/readyz"])

/** All limited routes are POST: a request of any other method has no bucket. */
const mayHaveBucket = (method: string) => method.toUpperCase() === "POST"

/**
 * Which bucket limits a request, if any, by method and normalised path (`routePath`), among the
 * limited routes of the features served.
 */
export const bucketOf = (authPrefix: string, routes: ReadonlyArray<LimitedRoute>) => {
  const table = routes.map((route) => ({ bucket: route.bucket, pattern: routePattern(authPrefix + route.path) }))
  return (method: string, path: string): RateLimitBucket | undefined =>
    mayHaveBucket(method) ? table.find((route) => route.pattern.test(path))?.bucket : undefined
}

/**
 * A request target as the router reads it, so that no other spelling of a limited route escapes
 * its bucket: the router ignores case, duplicate and trailing slashes, and whatever follows `?`,
 * `;` or `#`, and decodes percent-escapes. Decoding a little more than the router (`%2F`) can only
 * count a request that finds no route.
 */
export const routePath = (url: string) => {
  let path = targetPath(url).split(";", 1)[0] ?? ""
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

/**
 * Rate limits, ahead of everything else a request meets but the response headers, body checks
 * and decoding included: every request to a limited route counts, valid or not, until the limit.
 *
 * The client is the request's `remoteAddress`, which the outermost middleware resolved (trusted
 * proxy headers, else the socket). Each request to a limited route of a served feature counts against (bucket, client), IPv6 clients
 * by their /64, and with GLOBAL_RATE_LIMIT every request counts against (global, client) too. A
 * refused request is not counted and answers 429; an allowed one carries the RateLimit-* headers
 * of its tightest limit. A rate limiter that fails lets the request through, with a warning
 * (fail open).
 */
export const rateLimits = (settings: Settings, routes: ReadonlyArray<LimitedRoute>) =>
  Effect.map(RateLimiter, (limiter) => {
    const { server, limits } = settings
    const routeBucket = bucketOf(server.authPrefix, routes)
    const globalRule = Option.map(limits.globalRateLimit, ruleOf)
    const bucketRules = new Map<RateLimitBucket, RateLimitRule>()
    for (const route of routes) bucketRules.set(route.bucket, ruleOf(limits.authRateLimits[route.bucket]))

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

    /** The limits a request counts against, its route's bucket first. */
    const checksOf = (method: string, path: string, client: string) => {
      const checks: Array<{ readonly bucket: string; readonly key: string; readonly rule: RateLimitRule }> = []
      const bucket = limits.authRateLimitEnabled ? routeBucket(method, path) : undefined
      const bucketRule = bucket === undefined ? undefined : bucketRules.get(bucket)
      if (bucket !== undefined && bucketRule !== undefined)
        checks.push({ bucket, key: `${bucket}:${client}`, rule: bucketRule })
      if (Option.isSome(globalRule) && !unlimitedPaths.has(path)) {
        checks.push({ bucket: "global", key: `global:${client}`, rule: globalRule.value })
      }
      return checks
    }

    // Without a global limit only a bucket can count a request, and with no limit on at all,
    // nothing can: such requests pay for nothing here.
    const onlyBuckets = Option.isNone(globalRule)
    if (onlyBuckets && !limits.authRateLimitEnabled) return (app: HttpApp.Default) => app
    return (app: HttpApp.Default): HttpApp.Default =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        if (onlyBuckets && !mayHaveBucket(request.method)) return app
        // The address the outermost middleware resolved (responseHeaders in middleware.ts).
        const address = Option.getOrUndefined(request.remoteAddress)
        const client = address === undefined ? "unknown" : addressBucket(address)
        const checks = checksOf(request.method, routePath(request.url), client)
        // Most requests (GET /me and every other unlimited route) count against nothing: they pay
        // for no fiber work here.
        if (checks.length === 0) return app
        return Effect.gen(function* () {
          // The route's own bucket first: a request it refuses is not counted against the global limit.
          let tightest: RateLimitDecision | undefined
          for (const check of checks) {
            const decision = yield* hit(check.key, check.rule)
            if (Option.isNone(decision)) continue
            if (!decision.value.allowed) {
              yield* Metric.increment(Metric.tagged(rateLimitRefusals, "bucket", check.bucket))
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
          const response = yield* app
          return tightest === undefined
            ? response
            : withHeaders(
                response,
                rateLimitHeaders(tightest.limit, tightest.remaining, wholeSeconds(tightest.resetAfter))
              )
        })
      })
  })
