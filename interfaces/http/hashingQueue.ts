import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect } from "effect"
import { HashingQueueFullError } from "./errors.js"
import type { LimitedRoute } from "./Feature.js"
import { hashingQueueDepth } from "./metrics.js"
import { respond } from "./middleware.js"
import { problemOf } from "./problems.js"
import { routePath } from "./rateLimits.js"
import { routePattern } from "./routePattern.js"

const queueFull = problemOf(new HashingQueueFullError())

/**
 * A bound on the requests waiting to hash a password (HASHING_QUEUE_LIMIT, per process). A flood
 * of sign-ins would otherwise queue without end, each holding its connection, its body and its
 * fiber: past the bound a request to a route that hashes answers 503 with Retry-After at once,
 * before anything counts it (rate limits, failed attempts) or reads its body. The limited routes
 * a feature marks `hashes` are the ones bounded.
 */
export const hashingQueue =
  (authPrefix: string, routes: ReadonlyArray<LimitedRoute>, limit: number) =>
  (app: HttpApp.Default): HttpApp.Default => {
    const patterns = routes
      .filter((route) => route.hashes === true)
      .map((route) => routePattern(authPrefix + route.path))
    if (patterns.length === 0) return app
    let inFlight = 0
    const leave = Effect.sync(() => {
      inFlight--
      hashingQueueDepth.unsafeUpdate(inFlight, [])
    })
    return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      if (request.method !== "POST") return app
      const path = routePath(request.url)
      if (!patterns.some((pattern) => pattern.test(path))) return app
      if (inFlight >= limit) return Effect.succeed(respond(queueFull))
      inFlight++
      hashingQueueDepth.unsafeUpdate(inFlight, [])
      return Effect.ensuring(app, leave)
    })
  }
