import { Duration, Effect, Metric, Option } from "effect"
import { AccountLockedError, wholeSeconds } from "../domain/errors.js"
import { Audit } from "./Audit.js"
import { AuthPolicy } from "./AuthPolicy.js"
import { lockouts } from "./metrics.js"
import { AttemptCounter, type LockoutRule } from "./ports/AttemptCounter.js"
import type { StoreUnavailableError } from "./ports/StoreUnavailableError.js"

/** Lockout fails open: a password check is not refused because the attempt store is down. */
const failOpen =
  <B>(what: string, fallback: B) =>
  <A>(self: Effect.Effect<A, StoreUnavailableError>): Effect.Effect<A | B> =>
    Effect.catchTag(self, "StoreUnavailableError", (error) =>
      Effect.as(Effect.logWarning(`lockout skipped: could not ${what}`, error), fallback)
    )

/**
 * The lockout rule over every check of an account's password (sign-in, change-password):
 * failures of either count toward the same lock, per normalised login identifier, known to the
 * store or not.
 */
export class Lockout extends Effect.Service<Lockout>()("app/Lockout", {
  effect: Effect.gen(function* () {
    const attempts = yield* AttemptCounter
    const audit = yield* Audit
    const { limits } = yield* AuthPolicy
    const lockoutRule: Option.Option<LockoutRule> = limits.lockoutEnabled
      ? Option.some({
          maxAttempts: limits.maxLoginAttempts,
          duration: Duration.minutes(limits.lockoutDurationMinutes)
        })
      : Option.none()

    /**
     * Counts the attempt before its password is checked, or refuses it while the identifier is
     * locked; none when lockout is off or its store failed.
     */
    const start = (identifier: string) =>
      Option.match(lockoutRule, {
        onNone: () => Effect.succeedNone,
        onSome: (rule) =>
          attempts.attempt(identifier, rule).pipe(
            failOpen("count the attempt", undefined),
            Effect.flatMap((attempt) => {
              if (attempt === undefined) return Effect.succeedNone
              if (attempt._tag === "Locked") {
                return new AccountLockedError({ retryAfterSeconds: wholeSeconds(attempt.retryAfter) })
              }
              return Effect.succeedSome({ ...attempt, rule })
            })
          )
      })

    /**
     * Runs a password check under the rule. While the identifier is locked the check does not
     * even run (423), so a locked account costs no hashing; each attempt is counted before it
     * runs, so concurrent ones cannot all pass a check made before any failed. The failure that
     * reaches the maximum still fails as the check does; a success clears the count.
     *
     * Uninterruptible: an attempt once counted is always decided. A client that leaves while its
     * password is verified (the hash runs to its end regardless) would otherwise leave the attempt
     * counted as a failure, and the one that reached the maximum would leave the lock it set,
     * though the password was right.
     */
    const guard = <A, E, R>(identifier: string, check: Effect.Effect<A, E, R>) =>
      Effect.uninterruptible(
        Effect.gen(function* () {
          const attempt = yield* start(identifier)
          const result = yield* Effect.tapError(check, () =>
            Option.isSome(attempt) && attempt.value.locking
              ? Effect.logWarning("password checks locked after repeated failures").pipe(
                  Effect.annotateLogs({
                    identifier,
                    failures: attempt.value.attempts,
                    locked_minutes: Duration.toMinutes(attempt.value.rule.duration)
                  }),
                  // The lock is the identifier's, known to the store or not: the entry names no user.
                  Effect.zipRight(
                    audit.record({
                      type: "account.locked",
                      user_id: null,
                      details: {
                        identifier,
                        failures: attempt.value.attempts,
                        locked_minutes: Duration.toMinutes(attempt.value.rule.duration)
                      }
                    })
                  ),
                  Effect.zipRight(Metric.increment(lockouts))
                )
              : Effect.void
          )
          if (Option.isSome(attempt)) yield* attempts.clear(identifier).pipe(failOpen("clear the attempts", undefined))
          return result
        })
      )

    return { guard } as const
  })
}) {}
