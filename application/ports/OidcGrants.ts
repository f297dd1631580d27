import { Context, type DateTime, type Effect, type Option } from "effect"
import type { Grant, GrantToken } from "../../domain/oidc/Grant.js"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/**
 * The provider's grants and their refresh tokens (domain/oidc/Grant.ts), apart from the sessions:
 * a grant is not listed, counted or ended as a session is. Each operation is one atomic step, so
 * that of two rotations racing over one token, one rotates it and the other finds it rotated.
 */
export class OidcGrants extends Context.Tag("app/OidcGrants")<
  OidcGrants,
  {
    /** Stores a new grant, with its first refresh token when it has one. */
    readonly start: (grant: Grant, token: Option.Option<GrantToken>) => Effect.Effect<void, StoreUnavailableError>
    /**
     * A code's redemption: the code of digest `code` marked redeemed by this grant (at its
     * `created_at`) and the grant started, with its first refresh token when it has one, in one
     * commit; false, and nothing written, when the code was redeemed already (a racing redemption
     * won). A replay can only find the code redeemed once the grant is stored, and then finds the
     * grant to end (AuthorizationCodes.markReplayed).
     */
    readonly startFromCode: (
      code: string,
      grant: Grant,
      token: Option.Option<GrantToken>
    ) => Effect.Effect<boolean, StoreUnavailableError>
    /** The refresh token of this digest and its grant, as stored. */
    readonly presented: (
      digest: string
    ) => Effect.Effect<Option.Option<{ readonly token: GrantToken; readonly grant: Grant }>, StoreUnavailableError>
    /**
     * Replaces a live token of a live grant by `successor` (the grant used at `now`, living as long
     * as it); false, and nothing changed, when the token was rotated meanwhile or the grant ended.
     */
    readonly rotate: (
      digest: string,
      successor: GrantToken,
      now: DateTime.Utc
    ) => Effect.Effect<boolean, StoreUnavailableError>
    readonly find: (grantId: string) => Effect.Effect<Option.Option<Grant>, StoreUnavailableError>
    /** Ends the grant; false when it had ended already or is not known. */
    readonly revoke: (grantId: string, now: DateTime.Utc) => Effect.Effect<boolean, StoreUnavailableError>
    /** Ends every live grant of the user (to one client only, when named); answers how many. */
    readonly revokeOfUser: (
      userId: string,
      now: DateTime.Utc,
      clientId?: string
    ) => Effect.Effect<number, StoreUnavailableError>
    /** The user's live grants, most recently used first. */
    readonly liveOfUser: (
      userId: string,
      now: DateTime.Utc
    ) => Effect.Effect<ReadonlyArray<Grant>, StoreUnavailableError>
    /** Deletes at most `limit` grants (and their tokens) that ended before `before`; answers how many. */
    readonly deleteEnded: (before: DateTime.Utc, limit: number) => Effect.Effect<number, StoreUnavailableError>
    /** How many grants ended before `before` (a dry run of the sweep). */
    readonly countEnded: (before: DateTime.Utc) => Effect.Effect<number, StoreUnavailableError>
  }
>() {}
