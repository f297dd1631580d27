import { Duration, Effect, Option, type Redacted } from "effect"
import { RateLimitedError, ReauthenticationError, wholeSeconds } from "../domain/errors.js"
import { loginIdentifierOf } from "../domain/User.js"
import { AuthPolicy } from "./AuthPolicy.js"
import { Lockout } from "./Lockout.js"
import { PasswordHasher } from "./ports/PasswordHasher.js"
import { RateLimiter, type RateLimitRule } from "./ports/RateLimiter.js"
import type { Principal } from "./Sessions.js"

/**
 * The signed-in user's current password as a proof, for the changes a stolen session must not
 * make alone (a new password, another address): asked under the change_password limit, which is
 * keyed by user, and checked under the lockout rule like a sign-in.
 */
export class CurrentPassword extends Effect.Service<CurrentPassword>()("app/CurrentPassword", {
  effect: Effect.gen(function* () {
    const hasher = yield* PasswordHasher
    const lockout = yield* Lockout
    const limiter = yield* RateLimiter
    const policy = yield* AuthPolicy

    const rule: RateLimitRule = {
      limit: policy.limits.authRateLimits.change_password.count,
      window: Duration.seconds(policy.limits.authRateLimits.change_password.windowSeconds)
    }

    /**
     * The change_password limit, per user rather than per client address: a stolen access token
     * must not make the routes that ask for the password an oracle of it, and each guess costs a
     * hash. Fails open.
     */
    const limit = (principal: Principal) =>
      policy.limits.authRateLimitEnabled
        ? limiter.hit(`change_password:${principal.user.id}`, rule).pipe(
            Effect.catchTag("StoreUnavailableError", (error) =>
              Effect.as(Effect.logWarning("rate limit skipped: the rate limiter failed", error), undefined)
            ),
            Effect.flatMap((decision) =>
              decision === undefined || decision.allowed
                ? Effect.void
                : Effect.fail(
                    new RateLimitedError({ limit: decision.limit, resetSeconds: wholeSeconds(decision.resetAfter) })
                  )
            )
          )
        : Effect.void

    /**
     * The given password checked against the stored hash under the lockout rule: failures lock the
     * account as failed sign-ins do. A missing or wrong one is a ReauthenticationError (400).
     */
    const check = (principal: Principal, stored: string, given: Option.Option<Redacted.Redacted<string>>) =>
      lockout.guard(
        loginIdentifierOf(principal.user, policy.accounts.loginField),
        Effect.flatMap(
          Option.match(given, {
            onNone: () => Effect.succeed(false),
            onSome: (password) => hasher.verify(stored, password)
          }),
          (matches) => (matches ? Effect.void : Effect.fail(new ReauthenticationError()))
        )
      )

    return { limit, check } as const
  })
}) {}
