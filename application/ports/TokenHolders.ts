import { Context, type Effect, type Option } from "effect"
import type { FamilyId } from "../../domain/Session.js"
import type { User, UserId } from "../../domain/User.js"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/** The user an access token names, and whether the session it belongs to has ended. */
export interface TokenHolder {
  readonly user: User
  /** The family has ended (or never was): its access tokens are refused, whatever cache says otherwise. */
  readonly sessionEnded: boolean
}

/**
 * The read every authenticated request makes, as one call to the store: on SQL one statement
 * instead of the user's and the family's two. It answers what `UserRepo.findById` and
 * `RefreshTokenRepo.isEnded` would answer together, from the same record.
 */
export class TokenHolders extends Context.Tag("app/TokenHolders")<
  TokenHolders,
  {
    /** None when the user does not exist. */
    readonly find: (
      userId: UserId,
      familyId: FamilyId
    ) => Effect.Effect<Option.Option<TokenHolder>, StoreUnavailableError>
  }
>() {}
