import { Context, type DateTime, type Effect, type Option } from "effect"
import type { UserNotFoundError } from "../../domain/errors.js"
import type { FamilyId, StoredRefreshToken, TokenFamily } from "../../domain/Session.js"
import type { UserId } from "../../domain/User.js"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

export interface Rotation {
  /** Digest of the token being replaced. */
  readonly presented: string
  readonly successor: StoredRefreshToken
  /** The successor pair, sealed, kept for the reuse grace window; none when there is no window. */
  readonly sealedSuccessor: Option.Option<string>
  readonly now: DateTime.Utc
  /**
   * The client presenting the token, recorded on the family as the session's latest; a part
   * that is null (or no client at all) keeps what was recorded before.
   */
  readonly client?: { readonly ip_address: string | null; readonly user_agent: string | null } | undefined
}

/**
 * Refresh tokens, stored as digests and grouped in families (sessions) with their client
 * metadata.
 */
export class RefreshTokenRepo extends Context.Tag("app/RefreshTokenRepo")<
  RefreshTokenRepo,
  {
    /** Starts a family with its first token; UserNotFoundError when its user no longer exists. */
    readonly startFamily: (
      family: TokenFamily,
      first: StoredRefreshToken
    ) => Effect.Effect<void, UserNotFoundError | StoreUnavailableError>
    readonly findByDigest: (
      digest: string
    ) => Effect.Effect<
      Option.Option<{ readonly token: StoredRefreshToken; readonly family: TokenFamily }>,
      StoreUnavailableError
    >
    /**
     * Compare-and-swap: marks the presented token rotated and stores its successor only if the
     * presented token is still unrotated and its family unrevoked. Of any number of concurrent
     * rotations of one token, exactly one returns true.
     */
    readonly rotate: (rotation: Rotation) => Effect.Effect<boolean, StoreUnavailableError>
    /** Ends one family; true when it was live. */
    readonly revokeFamily: (familyId: FamilyId, now: DateTime.Utc) => Effect.Effect<boolean, StoreUnavailableError>
    /** Ends every live family of a user but `except`; answers the families ended. */
    readonly revokeFamiliesOfUser: (
      userId: UserId,
      now: DateTime.Utc,
      except: Option.Option<FamilyId>
    ) => Effect.Effect<ReadonlyArray<FamilyId>, StoreUnavailableError>
    /**
     * Whether a family has ended (or never was): the record every access token of the family is
     * checked against, so an ended session stays ended whatever happens to any cache.
     */
    readonly isEnded: (familyId: FamilyId) => Effect.Effect<boolean, StoreUnavailableError>
    /** The user's live families (not ended, not expired at `now`), in no particular order. */
    readonly liveFamiliesOf: (
      userId: UserId,
      now: DateTime.Utc
    ) => Effect.Effect<ReadonlyArray<TokenFamily>, StoreUnavailableError>
    /**
     * Ends one family only if it belongs to `userId` and is live at `now`; true when it did. A
     * family of another user is left as it is, and answered exactly like an unknown one.
     */
    readonly revokeFamilyOfUser: (
      userId: UserId,
      familyId: FamilyId,
      now: DateTime.Utc
    ) => Effect.Effect<boolean, StoreUnavailableError>
  }
>() {}
