import { Context, type Duration, type Effect } from "effect"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/** At most `limit` hits in any `window`: a sliding window, not a fixed one. */
export interface RateLimitRule {
  readonly limit: number
  readonly window: Duration.Duration
}

/** What a rate limiter decided about one hit, with what a client needs to pace itself. */
export interface RateLimitDecision {
  /** True when the hit was counted; a refused hit is not counted. */
  readonly allowed: boolean
  readonly limit: number
  /** Hits still allowed in the window after this one. */
  readonly remaining: number
  /**
   * Until the oldest counted hit leaves the window, so that one more hit is allowed: when
   * refused, how long to wait before trying again.
   */
  readonly resetAfter: Duration.Duration
}

/**
 * Counts hits per key in a sliding window. One call per check, which decides and counts at once,
 * so that an adapter on a shared store (a Redis script over a sorted set) stays atomic when
 * several workers count the same key. A store that does not answer fails with
 * StoreUnavailableError. Rate limits never fail open: the Redis adapter counts in the process
 * while Redis is unusable, so it does not fail.
 */
export class RateLimiter extends Context.Tag("app/RateLimiter")<
  RateLimiter,
  {
    /** Counts a hit on `key` unless `rule.limit` hits were already counted in the last `rule.window`. */
    readonly hit: (key: string, rule: RateLimitRule) => Effect.Effect<RateLimitDecision, StoreUnavailableError>
  }
>() {}
