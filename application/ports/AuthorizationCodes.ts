import { Context, type DateTime, type Effect, type Option } from "effect"
import type { StoredCode } from "../../domain/oidc/Code.js"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/**
 * The provider's authorization codes (domain/oidc/Code.ts), by digest. A code is redeemed with the
 * grant it starts (OidcGrants.startFromCode, one atomic step), so that of two redemptions racing
 * over one code, one redeems it and the other finds it redeemed: a replay, which ends whatever the
 * first one issued.
 */
export class AuthorizationCodes extends Context.Tag("app/AuthorizationCodes")<
  AuthorizationCodes,
  {
    readonly add: (code: StoredCode) => Effect.Effect<void, StoreUnavailableError>
    /** The code of this digest as stored, redeemed or not. */
    readonly find: (digest: string) => Effect.Effect<Option.Option<StoredCode>, StoreUnavailableError>
    /**
     * Records that a redeemed code was presented again; answers the grant its redemption started.
     */
    readonly markReplayed: (
      digest: string,
      now: DateTime.Utc
    ) => Effect.Effect<Option.Option<string>, StoreUnavailableError>
    /** Deletes at most `limit` codes that expired before `before` (the sweep); answers how many. */
    readonly deleteExpired: (before: DateTime.Utc, limit: number) => Effect.Effect<number, StoreUnavailableError>
    /** How many codes expired before `before` (a dry run of the sweep). */
    readonly countExpired: (before: DateTime.Utc) => Effect.Effect<number, StoreUnavailableError>
  }
>() {}
