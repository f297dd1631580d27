import { Clock, Duration, Effect, Layer } from "effect"
import { RateLimiter } from "../../application/ports/RateLimiter.js"
import { sweepEveryMinute } from "./sweep.js"

interface Log {
  /** Epoch ms of the hits counted in the window, oldest first. */
  readonly hits: Array<number>
  windowMs: number
}

/**
 * A sliding log per key: the instants of the hits still in the window, never more than the limit
 * since refused hits are not logged. Keys whose last hit has left its window are swept every
 * minute. Per process: several workers need the Redis adapter.
 */
export const make = Effect.gen(function* () {
  const logs = new Map<string, Log>()

  yield* sweepEveryMinute(logs, (log, now) => {
    const newest = log.hits[log.hits.length - 1]
    return newest === undefined || newest <= now - log.windowMs
  })

  return RateLimiter.of({
    hit: (key, rule) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const windowMs = Duration.toMillis(rule.window)
        let log = logs.get(key)
        if (log === undefined) {
          log = { hits: [], windowMs }
          logs.set(key, log)
        }
        log.windowMs = windowMs
        while (log.hits.length > 0 && (log.hits[0] ?? 0) <= now - windowMs) log.hits.shift()
        const allowed = log.hits.length < rule.limit
        if (allowed) log.hits.push(now)
        const oldest = log.hits[0] ?? now
        return {
          allowed,
          limit: rule.limit,
          remaining: Math.max(0, rule.limit - log.hits.length),
          resetAfter: Duration.millis(Math.max(0, oldest + windowMs - now))
        }
      })
  })
})

export const layer = Layer.scoped(RateLimiter, make)
