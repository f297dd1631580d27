import { Context, type DateTime, type Effect, type Option } from "effect"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/** What a user granted a client, as stored. */
export interface Consent {
  readonly user_id: string
  readonly client_id: string
  readonly scopes: ReadonlyArray<string>
  readonly granted_at: DateTime.Utc
}

/** The consents users gave the provider's clients, one per user and client. */
export class Consents extends Context.Tag("app/Consents")<
  Consents,
  {
    readonly find: (userId: string, clientId: string) => Effect.Effect<Option.Option<Consent>, StoreUnavailableError>
    /**
     * Adds `scopes` to what the user granted the client (a first grant stores them); answers
     * whether the client held no consent of this user before (a new grant, which the user is told of).
     */
    readonly grant: (
      userId: string,
      clientId: string,
      scopes: ReadonlyArray<string>,
      now: DateTime.Utc
    ) => Effect.Effect<boolean, StoreUnavailableError>
    /** Withdraws the user's consent to the client; false when there was none. */
    readonly withdraw: (userId: string, clientId: string) => Effect.Effect<boolean, StoreUnavailableError>
    /** Every consent of the user, oldest first. */
    readonly ofUser: (userId: string) => Effect.Effect<ReadonlyArray<Consent>, StoreUnavailableError>
  }
>() {}
