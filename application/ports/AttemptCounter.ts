import { Context, type Duration, type Effect } from "effect"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/** LOCKOUT_*: how many failed sign-ins lock an identifier, and for how long. */
export interface LockoutRule {
  readonly maxAttempts: number
  readonly duration: Duration.Duration
}

/** What the counter made of a sign-in attempt. */
export type Attempt =
  /** The identifier is locked: the attempt is refused, and not counted. */
  | { readonly _tag: "Locked"; readonly retryAfter: Duration.Duration }
  /**
   * The attempt is counted, as a failure until it succeeds. `locking`: it reached the maximum,
   * so the identifier is locked from now on unless this attempt succeeds.
   */
  | { readonly _tag: "Counted"; readonly attempts: number; readonly locking: boolean }

/**
 * Sign-in attempts and lockouts per normalised login identifier, known to the user store or not.
 * Each operation is one call, so that an adapter on a shared store is atomic (a Redis script). A
 * store that does not answer fails with StoreUnavailableError. Lockout never fails open: the Redis
 * adapter counts in the process while Redis is unusable, so it does not fail.
 */
export class AttemptCounter extends Context.Tag("app/AttemptCounter")<
  AttemptCounter,
  {
    /**
     * Starts a sign-in attempt: refused while the identifier is locked, otherwise counted at once,
     * before its password is verified, so that concurrent attempts cannot all pass a check made
     * before any of them failed. The attempt that reaches `rule.maxAttempts` locks the identifier
     * for `rule.duration` and starts a new count. Attempts are forgotten `rule.duration` after the
     * last one.
     */
    readonly attempt: (identifier: string, rule: LockoutRule) => Effect.Effect<Attempt, StoreUnavailableError>
    /** The attempt succeeded: forgets the identifier's attempts and any lock. */
    readonly clear: (identifier: string) => Effect.Effect<void, StoreUnavailableError>
  }
>() {}
