import { Context, type DateTime, type Effect, type Option } from "effect"
import type { UserNotFoundError } from "../../domain/errors.js"
import type { PruneBatch, PruneCutoffs, PruneReport } from "../../domain/Retention.js"
import type { FamilyId, SessionPosition, StoredRefreshToken, TokenFamily } from "../../domain/Session.js"
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

/** One page of a user's live families (domain/Session.ts, "A user's list of sessions"). */
export interface LivePage {
  /** At most this many families. */
  readonly limit: number
  /** Only the families after this place in the list; none: from its start. */
  readonly after: Option.Option<SessionPosition>
  /** A family left out (the caller's own, shown apart). */
  readonly except: Option.Option<FamilyId>
}

/**
 * What one batch of a bulk ending did: how many families it ended, how many of them were live,
 * and whether it found none left beyond them (a racing ending may have taken some of its own).
 */
export interface EndedBatch {
  readonly ended: number
  readonly live: number
  readonly done: boolean
}

/**
 * The sweeps of refresh tokens and sessions (docs/operating.md, "Data over time"), in the order a
 * sweep runs them, each over rows whose purpose ended before its cutoff (domain/Retention.ts),
 * taken in the order of one time (the step's key):
 * - `expiredTokens`: tokens past their own expiry (by expiry);
 * - `revokedSessionTokens`: the tokens of sessions revoked before the cutoff (by that time), so
 *   that deleting a session never cascades to more rows than one batch. An expired session needs
 *   no such step: it expires with its newest token, so `expiredTokens` has taken all of its tokens
 *   already (its cutoff, the present, is later than the sessions' cutoff);
 * - `revokedSessions`, `expiredSessions`: the sessions themselves, with any token left;
 * - `sealedSuccessors`: the sealed successors of tokens rotated before the cutoff, cleared (by
 *   rotation).
 */
export const sessionPruneSteps = [
  "expiredTokens",
  "revokedSessionTokens",
  "revokedSessions",
  "expiredSessions",
  "sealedSuccessors"
] as const

export type SessionPruneStep = (typeof sessionPruneSteps)[number]

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
    /**
     * One batch of ending every session of a user but `except`: ends at most `limit` of the
     * families not yet ended (expired ones too: that costs nothing and covers any access token
     * still alive), so that ending thousands never holds the store or the event loop for long.
     */
    readonly endFamiliesOfUser: (
      userId: UserId,
      now: DateTime.Utc,
      except: Option.Option<FamilyId>,
      limit: number
    ) => Effect.Effect<EndedBatch, StoreUnavailableError>
    /**
     * Ends the user's least recently used families beyond the `keep` most recently used of those
     * not yet ended (MAX_SESSIONS_PER_USER); answers the ones it ended that were live at `now`.
     */
    readonly endLeastRecentlyUsed: (
      userId: UserId,
      now: DateTime.Utc,
      keep: number
    ) => Effect.Effect<ReadonlyArray<FamilyId>, StoreUnavailableError>
    /**
     * One batch of deleting a user's session records, for the deletion of the user: at most
     * `limit` of their refresh tokens (`tokens`), or of their sessions with any token left
     * (`sessions`); answers how many.
     */
    readonly deleteOfUser: (
      userId: UserId,
      what: "tokens" | "sessions",
      limit: number
    ) => Effect.Effect<number, StoreUnavailableError>
    /**
     * Whether a family has ended (or never was): the record every access token of the family is
     * checked against, so an ended session stays ended whatever happens to any cache.
     */
    readonly isEnded: (familyId: FamilyId) => Effect.Effect<boolean, StoreUnavailableError>
    /**
     * A page of the user's live families (not ended, not expired at `now`), most recently used
     * first (domain/Session.ts `byRecentUse`), read through an index of the live ones only.
     */
    readonly liveFamiliesOf: (
      userId: UserId,
      now: DateTime.Utc,
      page: LivePage
    ) => Effect.Effect<ReadonlyArray<TokenFamily>, StoreUnavailableError>
    /** One of the user's families, if it is live at `now`. */
    readonly liveFamily: (
      userId: UserId,
      familyId: FamilyId,
      now: DateTime.Utc
    ) => Effect.Effect<Option.Option<TokenFamily>, StoreUnavailableError>
    /**
     * Ends one family only if it belongs to `userId` and is live at `now`; true when it did. A
     * family of another user is left as it is, and answered exactly like an unknown one.
     */
    readonly revokeFamilyOfUser: (
      userId: UserId,
      familyId: FamilyId,
      now: DateTime.Utc
    ) => Effect.Effect<boolean, StoreUnavailableError>
    /**
     * One batch of a sweep's step: at most `limit` of its rows, the first by its key at or after
     * `from`, deleted (or cleared).
     */
    readonly prune: (
      step: SessionPruneStep,
      before: DateTime.Utc,
      limit: number,
      from: number
    ) => Effect.Effect<PruneBatch, StoreUnavailableError>
    /**
     * What a sweep at `cutoffs` would delete (or clear) now, for a dry run: each row counted once,
     * as the steps in their order would meet it.
     */
    readonly pending: (
      cutoffs: PruneCutoffs
    ) => Effect.Effect<
      Omit<
        PruneReport,
        | "auditEvents"
        | "signInRequests"
        | "addressChanges"
        | "webhookMessages"
        | "providerCodes"
        | "parkedRequests"
        | "providerGrants"
        | "idleClients"
      >,
      StoreUnavailableError
    >
  }
>() {}
