import { Context, type DateTime, type Effect } from "effect"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/**
 * Single-use tokens (an OAuth state), each spent at most once until the instant after which it
 * could not be used anyway. Spending is one atomic set-if-absent, so that of racing uses exactly
 * one wins, on every worker when the store is shared. Ended sessions are not kept here: the
 * database records them (RefreshTokenRepo), so no loss of this store revives one.
 */
export class Blacklist extends Context.Tag("app/Blacklist")<
  Blacklist,
  {
    /** Spends the token until `until`: true when this call spent it, false when it was spent already. */
    readonly burn: (jti: string, until: DateTime.Utc) => Effect.Effect<boolean, StoreUnavailableError>
  }
>() {}
