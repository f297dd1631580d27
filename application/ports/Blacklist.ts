import { Context, type DateTime, type Effect } from "effect"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/**
 * Revoked access tokens, by jti and by family, each kept until no token it covers can still be
 * valid. Consulted on every authenticated request, so it must answer in memory or one round trip.
 */
export class Blacklist extends Context.Tag("app/Blacklist")<
  Blacklist,
  {
    readonly revokeToken: (jti: string, until: DateTime.Utc) => Effect.Effect<void, StoreUnavailableError>
    readonly revokeFamily: (familyId: string, until: DateTime.Utc) => Effect.Effect<void, StoreUnavailableError>
    /** True when the token or its family is revoked. */
    readonly isRevoked: (jti: string, familyId: string | null) => Effect.Effect<boolean, StoreUnavailableError>
  }
>() {}
