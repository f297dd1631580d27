import { Context, type DateTime, type Effect, type Option } from "effect"
import type { AuthorizationRequest } from "../../domain/oidc/Authorization.js"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/** An authorization request waiting for the user to sign in or consent, under an opaque id. */
export interface ParkedRequest {
  /** The SHA-256 digest of the id the browser carries (`?request=`). */
  readonly digest: string
  readonly request: AuthorizationRequest
  /** A sign-in at or after this counts as made for the request (`prompt=login`, `max_age`). */
  readonly parked_at: DateTime.Utc
  readonly expires_at: DateTime.Utc
}

/** The authorization requests parked while their users sign in or consent, in the database with the codes. */
export class ParkedRequests extends Context.Tag("app/ParkedRequests")<
  ParkedRequests,
  {
    readonly park: (parked: ParkedRequest) => Effect.Effect<void, StoreUnavailableError>
    /** The request of this digest, unless it has expired by `now`. */
    readonly find: (
      digest: string,
      now: DateTime.Utc
    ) => Effect.Effect<Option.Option<ParkedRequest>, StoreUnavailableError>
    /** Removes the request once answered; false when it was not there (answered by a racing request). */
    readonly remove: (digest: string) => Effect.Effect<boolean, StoreUnavailableError>
    /** Deletes at most `limit` requests that expired before `before` (the sweep); answers how many. */
    readonly deleteExpired: (before: DateTime.Utc, limit: number) => Effect.Effect<number, StoreUnavailableError>
    /** How many requests expired before `before` (a dry run of the sweep). */
    readonly countExpired: (before: DateTime.Utc) => Effect.Effect<number, StoreUnavailableError>
  }
>() {}
