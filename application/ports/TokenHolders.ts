import { Context, type Effect, type Option } from "effect"
import type { FamilyId, StoredRefreshToken, TokenFamily } from "../../domain/Session.js"
import type { User, UserId } from "../../domain/User.js"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/** The user an access token names, and whether the session it belongs to has ended. */
export interface TokenHolder {
  readonly user: User
  /** The family has ended (or never was): its access tokens are refused, whatever cache says otherwise. */
  readonly sessionEnded: boolean
}

/** A refresh token presented, its family, and the user the family belongs to (none when gone). */
export interface PresentedRefresh {
  readonly token: StoredRefreshToken
  readonly family: TokenFamily
  readonly user: Option.Option<User>
}

/**
 * The reads a token's every use makes, each as one call to the store: on SQL one statement
 * instead of two. `find`, for every authenticated request, answers what `UserRepo.findById` and
 * `RefreshTokenRepo.isEnded` would answer together; `presented`, for every refresh, what
 * `RefreshTokenRepo.findByDigest` and `UserRepo.findById` of the family's user would.
 */
export class TokenHolders extends Context.Tag("app/TokenHolders")<
  TokenHolders,
  {
    /** None when the user does not exist. */
    readonly find: (
      userId: UserId,
      familyId: FamilyId
    ) => Effect.Effect<Option.Option<TokenHolder>, StoreUnavailableError>
    /** None when no refresh token has this digest. */
    readonly presented: (digest: string) => Effect.Effect<Option.Option<PresentedRefresh>, StoreUnavailableError>
  }
>() {}
