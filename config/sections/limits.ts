import * as F from "../forms.js"
import type { SettingsReader } from "../reader.js"

/**
 * The rate-limit buckets AUTH_RATE_LIMITS may name, with their default limits. A feature counts
 * its limited routes in these per client address (interfaces/http/features); change_password
 * (by the use case) and passkey_register (by the passkey handlers) are counted per signed-in
 * user, since a stolen access token may come from any address.
 */
export const rateLimitBuckets = {
  login: { count: 5, windowSeconds: 60 },
  register: { count: 3, windowSeconds: 60 },
  password_reset: { count: 3, windowSeconds: 60 },
  verify_email: { count: 3, windowSeconds: 60 },
  passkey_auth: { count: 10, windowSeconds: 60 },
  refresh: { count: 30, windowSeconds: 60 },
  oauth_callback: { count: 10, windowSeconds: 60 },
  oauth_authorize: { count: 30, windowSeconds: 60 },
  change_password: { count: 5, windowSeconds: 60 },
  passkey_register: { count: 10, windowSeconds: 60 },
  email_sign_in: { count: 3, windowSeconds: 60 },
  email_sign_in_confirm: { count: 10, windowSeconds: 60 },
  oidc_token: { count: 60, windowSeconds: 60 },
  oidc_authorize: { count: 30, windowSeconds: 60 },
  oidc_register: { count: 10, windowSeconds: 3600 }
} satisfies Record<string, F.RateLimit>
export type RateLimitBucket = keyof typeof rateLimitBuckets

const bucketLimits = F.mapOf<RateLimitBucket, F.RateLimit>(F.rateLimit, rateLimitBuckets)

/** Account lockout after failed sign-ins, and rate limits per client. */
export const readLimits = (read: SettingsReader) => ({
  lockoutEnabled: read.setting("LOCKOUT_ENABLED", F.bool, true, {
    doc: "Lock an identifier after MAX_LOGIN_ATTEMPTS failed sign-ins."
  }),
  maxLoginAttempts: read.setting("MAX_LOGIN_ATTEMPTS", F.int(1, 1000), 5, {
    doc: "Failed sign-ins per identifier before a lock."
  }),
  lockoutDurationMinutes: read.setting("LOCKOUT_DURATION_MINUTES", F.int(1, 10_080), 15, {
    doc: "How long a lock lasts."
  }),
  authRateLimitEnabled: read.setting("AUTH_RATE_LIMIT_ENABLED", F.bool, true, {
    doc: "Per-client rate limits on the sign-in routes."
  }),
  authRateLimits: read.setting("AUTH_RATE_LIMITS", bucketLimits, rateLimitBuckets, {
    doc: 'A JSON object of `"<count>/<window>"` per bucket, window `second`, `minute`, `hour`, `day` or `<n>s`; a partial object keeps the other defaults. Counted per client address, change_password and passkey_register per signed-in user.',
    shownDefault:
      "login 5, register 3, password_reset 3, verify_email 3, passkey_auth 10, refresh 30, oauth_callback 10, oauth_authorize 30, change_password 5, passkey_register 10, email_sign_in 3, email_sign_in_confirm 10, oidc_token 60, oidc_authorize 30 per minute"
  }),
  /** Requests that may wait to hash a password (sign-in, registration) per process; past it, 503. */
  hashingQueueLimit: read.setting("HASHING_QUEUE_LIMIT", F.int(1, 100_000), 64, {
    doc: "Sign-ins and registrations that may wait for a password hash at once, per process; past it they answer 503 with `Retry-After: 1` before anything counts them."
  }),
  /** Every request of a client, but the health probes. */
  globalRateLimit: read.optional("GLOBAL_RATE_LIMIT", F.rateLimit, {
    doc: "A limit per client over every route but the health probes, e.g. `600/minute`."
  })
})

export type LimitSettings = ReturnType<typeof readLimits>
