import { Context, type DateTime, type Effect, type Option } from "effect"
import type { EmailSignInRequest, WrongCodeCount } from "../../domain/EmailSignIn.js"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/**
 * Pending sign-ins by mail (domain/EmailSignIn.ts), one per address. Each operation is one
 * atomic step of the store: of two confirmations racing over one request, one takes it.
 */
export class EmailSignInRequests extends Context.Tag("app/EmailSignInRequests")<
  EmailSignInRequests,
  {
    /** Stores the address's request in place of any earlier one, which is void from then on. */
    readonly replace: (request: EmailSignInRequest) => Effect.Effect<void, StoreUnavailableError>
    /** Takes (deletes and answers) the live request of a token's digest; none when there is none. */
    readonly takeByToken: (
      tokenDigest: string,
      now: DateTime.Utc
    ) => Effect.Effect<Option.Option<EmailSignInRequest>, StoreUnavailableError>
    /**
     * Takes (deletes and answers) the address's live request when the code's digest is its and
     * fewer than `maxAttempts` wrong codes were counted against it; none otherwise. A wrong code
     * changes nothing here (countWrongCode counts it), so every refusal is the same step.
     */
    readonly takeByCode: (
      email: string,
      codeDigest: string,
      now: DateTime.Utc,
      maxAttempts: number
    ) => Effect.Effect<Option.Option<EmailSignInRequest>, StoreUnavailableError>
    /**
     * Counts a wrong code against the address's live request; the count that reaches
     * `maxAttempts` deletes it, and no take succeeds from that count on.
     */
    readonly countWrongCode: (
      email: string,
      now: DateTime.Utc,
      maxAttempts: number
    ) => Effect.Effect<WrongCodeCount, StoreUnavailableError>
    /** How many requests expired before `before` (a dry run of the sweep). */
    readonly countExpired: (before: DateTime.Utc) => Effect.Effect<number, StoreUnavailableError>
    /** Deletes at most `limit` requests that expired before `before` (the sweep); answers how many. */
    readonly deleteExpired: (before: DateTime.Utc, limit: number) => Effect.Effect<number, StoreUnavailableError>
  }
>() {}
