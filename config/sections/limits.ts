import * as F from "../forms.js"
import type { SettingsReader } from "../reader.js"

/**
 * The rate-limit buckets AUTH_RATE_LIMITS may name, with their default limits. A feature counts
 * its limited routes in these per client address (interfaces/http/features); change_password is
 * counted per signed-in user, by the use case.
 */
export const rateLimitBuckets = {
  login: { count: 5, windowSeconds: 60 },
  register: { count: 3, windowSeconds: 60 },
  password_reset: { count: 3, windowSeconds: 60 },
  verify_email: { count: 3, windowSeconds: 60 },
  passkey_auth: { count: 10, windowSeconds: 60 },
  refresh: { count: 30, windowSeconds: 60 },
  oauth_callback: { count: 10, windowSeconds: 60 },
  change_password: { count: 5, windowSeconds: 60 }
} satisfies Record<string, F.RateLimit>
export type RateLimitBucket = keyof typeof rateLimitBuckets

const bucketLimits = F.mapOf<RateLimitBucket, F.RateLimit>(F.rateLimit, rateLimitBuckets)

/** Account lockout after failed sign-ins, and rate limits per client. */
export const readLimits = (read: SettingsReader) => ({
  lockoutEnabled: read.setting("LOCKOUT_ENABLED", F.bool, true),
  maxLoginAttempts: read.setting("MAX_LOGIN_ATTEMPTS", F.int(1, 1000), 5),
  lockoutDurationMinutes: read.setting("LOCKOUT_DURATION_MINUTES", F.int(1, 10_080), 15),
  authRateLimitEnabled: read.setting("AUTH_RATE_LIMIT_ENABLED", F.bool, true),
  authRateLimits: read.setting("AUTH_RATE_LIMITS", bucketLimits, rateLimitBuckets),
  /** Requests that may wait to hash a password (sign-in, registration) per process; past it, 503. */
  hashingQueueLimit: read.setting("HASHING_QUEUE_LIMIT", F.int(1, 100_000), 64),
  /** Every request of a client, but the health probes. */
  globalRateLimit: read.optional("GLOBAL_RATE_LIMIT", F.rateLimit)
})

export type LimitSettings = ReturnType<typeof readLimits>
