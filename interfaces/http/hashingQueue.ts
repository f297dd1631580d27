import { Effect } from "effect"
import { HashingQueueFullError } from "./errors.js"
import { hashingQueueDepth } from "./metrics.js"
import { respond } from "./middleware.js"
import { problemOf } from "./problems.js"
import type { Step } from "./step.js"

const queueFull = problemOf(new HashingQueueFullError())

/**
 * A bound on the requests waiting to hash a password (HASHING_QUEUE_LIMIT, per process). A flood
 * of sign-ins would otherwise queue without end, each holding its connection, its body and its
 * fiber: past the bound a request to a route that hashes answers 503 with Retry-After at once,
 * before anything counts it (rate limits, failed attempts) or reads its body. The routes bounded
 * are those whose endpoints are marked `hashing` (Api.ts).
 */
export const hashingQueue = (limit: number): Step => {
  let inFlight = 0
  const leave = Effect.sync(() => {
    inFlight--
    hashingQueueDepth.unsafeUpdate(inFlight, [])
  })
  return (next) => (routed) => {
    if (!routed.route.hashes) return next(routed)
    if (inFlight >= limit) return Effect.succeed(respond(queueFull))
    inFlight++
    hashingQueueDepth.unsafeUpdate(inFlight, [])
    return Effect.ensuring(next(routed), leave)
  }
}
