import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Duration, Effect, Layer, Metric, Option } from "effect"
import { type RateLimitDecision, RateLimiter, type RateLimitRule } from "../../application/ports/RateLimiter.js"
import type { RateLimit } from "../../config/forms.js"
import type { Settings } from "../../config/Settings.js"
import type { RateLimitBucket } from "../../config/sections/limits.js"
import { RateLimitedError, wholeSeconds } from "../../domain/errors.js"
import { addressBucket } from "./clientAddress.js"
import { rateLimitRefusals } from "./metrics.js"
import { respond } from "./middleware.js"
import { problemOf, rateLimitHeaders } from "./problems.js"
import type { ResolvedRoute } from "./routes.js"
import { CurrentPrincipal, PasskeyRegisterLimit } from "./security.js"
import { pass, type Step } from "./step.js"

/** Load balancers probe these from one address; throttling them would take the service out of rotation. */
export const unlimitedPaths: ReadonlySet<string> = new Set(["/healthz", "/readyz"])

const ruleOf = (limit: RateLimit): RateLimitRule => ({
  limit: limit.count,
  window: Duration.seconds(limit.windowSeconds)
})

/**
 * Rate limits, ahead of everything else a request meets but the response headers, cookie mode's
 * Origin check and the hashing queue, body checks and decoding included: every request to a
 * limited route counts, valid or not, until the limit.
 *
 * The client is the request's `remoteAddress`, which the pipeline's first step resolved (trusted
 * proxy headers, else the socket). Each request to a limited route of a kept feature counts
 * against (bucket, client), IPv6 clients by their /64, and with GLOBAL_RATE_LIMIT every request
 * counts against (global, client) too. A refused request is not counted and answers 429; an
 * allowed one carries the RateLimit-* headers of its tightest limit. A rate limiter that fails
 * lets the request through, with a warning (fail open).
 */
export const rateLimits = (settings: Settings) =>
  Effect.map(RateLimiter, (limiter): Step => {
    const { limits } = settings
    const globalRule = Option.map(limits.globalRateLimit, ruleOf)
    const bucketRules = new Map<RateLimitBucket, RateLimitRule>()
    for (const bucket of Object.keys(limits.authRateLimits) as Array<RateLimitBucket>)
      bucketRules.set(bucket, ruleOf(limits.authRateLimits[bucket]))

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
    const checksOf = (route: ResolvedRoute, client: string) => {
      const checks: Array<{ readonly bucket: string; readonly key: string; readonly rule: RateLimitRule }> = []
      const bucket = limits.authRateLimitEnabled ? route.bucket : undefined
      const bucketRule = bucket === undefined ? undefined : bucketRules.get(bucket)
      if (bucket !== undefined && bucketRule !== undefined)
        checks.push({ bucket, key: `${bucket}:${client}`, rule: bucketRule })
      if (Option.isSome(globalRule) && !unlimitedPaths.has(route.id)) {
        checks.push({ bucket: "global", key: `global:${client}`, rule: globalRule.value })
      }
      return checks
    }

    // Without a global limit only a bucket can count a request, and with no limit on at all,
    // nothing can: such requests pay for nothing here.
    const onlyBuckets = Option.isNone(globalRule)
    if (onlyBuckets && !limits.authRateLimitEnabled) return pass
    return (next) => (routed) => {
      const { request, route } = routed
      if (onlyBuckets && route.bucket === undefined) return next(routed)
      // The address the pipeline's first step resolved (responseHeaders in middleware.ts).
      const address = Option.getOrUndefined(request.remoteAddress)
      const client = address === undefined ? "unknown" : addressBucket(address)
      const checks = checksOf(route, client)
      // Most requests (GET /me and every other unlimited route) count against nothing: they pay
      // for no fiber work here.
      if (checks.length === 0) return next(routed)
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
        const response = yield* next(routed)
        // A 429 from inside (a bucket counted per user) carries the headers of the limit that refused it.
        return tightest === undefined || response.status === 429
          ? response
          : HttpServerResponse.setHeaders(
              response,
              rateLimitHeaders(tightest.limit, tightest.remaining, wholeSeconds(tightest.resetAfter))
            )
      })
    }
  })

/** The RateLimit-* headers a response carries: the tighter of those already set and `decision`'s. */
const tighterHeaders = (response: HttpServerResponse.HttpServerResponse, decision: RateLimitDecision) => {
  const set = response.headers["ratelimit-remaining"]
  return set !== undefined && Number(set) <= decision.remaining
    ? response
    : HttpServerResponse.setHeaders(
        response,
        rateLimitHeaders(decision.limit, decision.remaining, wholeSeconds(decision.resetAfter))
      )
}

/**
 * A bucket counted per signed-in user rather than per client address (passkey_register), once
 * the principal is known: a stolen access token can be used from any address, and each request
 * it makes costs the service (a stored challenge). Refused: RateLimitedError (429, Retry-After
 * and the RateLimit headers), not counted; allowed: the response carries the RateLimit headers,
 * unless a tighter limit (GLOBAL_RATE_LIMIT) set its own. A rate limiter that fails lets the
 * request through with a warning, as the address buckets do.
 */
const userLimit = (settings: Settings, bucket: RateLimitBucket) =>
  Effect.map(RateLimiter, (limiter) => {
    const { limits } = settings
    if (!limits.authRateLimitEnabled) return (_userId: string): Effect.Effect<void, RateLimitedError> => Effect.void
    const rule = ruleOf(limits.authRateLimits[bucket])
    return (userId: string): Effect.Effect<void, RateLimitedError> =>
      limiter.hit(`${bucket}:${userId}`, rule).pipe(
        Effect.catchTag("StoreUnavailableError", (error) =>
          Effect.as(Effect.logWarning("rate limit skipped: the rate limiter failed", error), undefined)
        ),
        Effect.flatMap((decision) => {
          if (decision === undefined) return Effect.void
          if (!decision.allowed) {
            return Effect.zipRight(
              Metric.increment(Metric.tagged(rateLimitRefusals, "bucket", bucket)),
              Effect.fail(
                new RateLimitedError({ limit: decision.limit, resetSeconds: wholeSeconds(decision.resetAfter) })
              )
            )
          }
          return HttpApp.appendPreResponseHandler((_request, response) =>
            Effect.succeed(tighterHeaders(response, decision))
          )
        })
      )
  })

/**
 * The passkey_register middleware (security.ts) of the registration routes: it runs after
 * Authentication and before the body is decoded, so invalid requests count too.
 */
export const passkeyRegisterLimit = (settings: Settings) =>
  Layer.effect(
    PasskeyRegisterLimit,
    Effect.map(userLimit(settings, "passkey_register"), (limit) =>
      Effect.flatMap(
        Effect.serviceOption(CurrentPrincipal),
        Option.match({
          onSome: (principal) => limit(principal.user.id),
          // Only if an endpoint names it after Authentication: a wiring fault, never a request let through uncounted.
          onNone: () => Effect.dieMessage("PasskeyRegisterLimit ran before Authentication")
        })
      )
    )
  )
