import { DateTime, type Duration, Effect, Layer, Schedule } from "effect"
import { isEmptyReport, PRUNE_BATCH, type PruneCutoffs, type PruneReport, pruneCutoffs } from "../domain/Retention.js"
import { AuthPolicy } from "./AuthPolicy.js"
import { restAsLong, untilNoneFound, untilNoneLeft } from "./batches.js"
import { AddressChanges } from "./ports/AddressChanges.js"
import { AuditLog } from "./ports/AuditLog.js"
import { AuthorizationCodes } from "./ports/AuthorizationCodes.js"
import { EmailSignInRequests } from "./ports/EmailSignInRequests.js"
import { OidcClients } from "./ports/OidcClients.js"
import { OidcGrants } from "./ports/OidcGrants.js"
import { Outbox, type OutboxPruneStep } from "./ports/Outbox.js"
import { ParkedRequests } from "./ports/ParkedRequests.js"
import { RefreshTokenRepo, type SessionPruneStep } from "./ports/RefreshTokenRepo.js"
import { StoreSpace } from "./ports/StoreSpace.js"

/**
 * Data over time (docs/operating.md): deletes what has outlived its purpose, in batches of at most
 * PRUNE_BATCH rows, resting as long as each batch took before the next (restAsLong), and gives
 * SQLite's free pages back.
 */
export class Pruning extends Effect.Service<Pruning>()("app/Pruning", {
  effect: Effect.gen(function* () {
    const sessions = yield* RefreshTokenRepo
    const log = yield* AuditLog
    const signIns = yield* EmailSignInRequests
    const addressChanges = yield* AddressChanges
    const outbox = yield* Outbox
    const space = yield* StoreSpace
    const codes = yield* AuthorizationCodes
    const parked = yield* ParkedRequests
    const grants = yield* OidcGrants
    const clients = yield* OidcClients
    const policy = yield* AuthPolicy
    const cutoffsAt = (now: DateTime.Utc): PruneCutoffs =>
      pruneCutoffs(
        {
          ...policy.tokens,
          auditRetentionDays: policy.storage.auditRetentionDays,
          dynamicClientIdleDays: policy.storage.dynamicClientIdleDays
        },
        now
      )

    const step = (name: SessionPruneStep, before: DateTime.Utc) =>
      untilNoneFound((size, from) => sessions.prune(name, before, size, from), PRUNE_BATCH, restAsLong)

    const settled = (step: OutboxPruneStep, before: DateTime.Utc) =>
      untilNoneFound((size, from) => outbox.prune(step, before, size, from), PRUNE_BATCH, restAsLong)

    /** One sweep: every rule in turn, then the free pages. Answers what it deleted. */
    const prune = Effect.fn("Pruning.prune")(function* () {
      const cutoffs = cutoffsAt(yield* DateTime.now)
      const ended = cutoffs.sessionsEndedBefore
      const expired = yield* step("expiredTokens", cutoffs.tokensExpiredBefore)
      const ofRevoked = yield* step("revokedSessionTokens", ended)
      const report: PruneReport = {
        refreshTokens: expired + ofRevoked,
        sessions: (yield* step("revokedSessions", ended)) + (yield* step("expiredSessions", ended)),
        sealedSuccessors: yield* step("sealedSuccessors", cutoffs.sealedRotatedBefore),
        auditEvents: yield* untilNoneFound(
          (size, from) => log.deleteBefore(cutoffs.auditBefore, size, from),
          PRUNE_BATCH,
          restAsLong
        ),
        signInRequests: yield* untilNoneLeft(
          (size) => signIns.deleteExpired(cutoffs.signInRequestsExpiredBefore, size),
          PRUNE_BATCH,
          restAsLong
        ),
        // A pending change past its links' lifetime, an undo past its window (its address free again).
        addressChanges: yield* untilNoneLeft(
          (size) => addressChanges.deleteExpired(cutoffs.signInRequestsExpiredBefore, size),
          PRUNE_BATCH,
          restAsLong
        ),
        webhookMessages:
          (yield* settled("delivered", cutoffs.webhookMessagesSettledBefore)) +
          (yield* settled("dead", cutoffs.webhookMessagesSettledBefore)),
        // A code's replay ends what it issued until no access token of it can be alive.
        providerCodes: yield* untilNoneLeft((size) => codes.deleteExpired(ended, size), PRUNE_BATCH, restAsLong),
        parkedRequests: yield* untilNoneLeft(
          (size) => parked.deleteExpired(cutoffs.signInRequestsExpiredBefore, size),
          PRUNE_BATCH,
          restAsLong
        ),
        // A grant's access tokens are refused once its row is gone, as when it ended: the same cutoff as sessions.
        providerGrants: yield* untilNoneLeft((size) => grants.deleteEnded(ended, size), PRUNE_BATCH, restAsLong),
        // Removing a client takes its codes, consents and grants with it (ON DELETE CASCADE).
        idleClients: yield* untilNoneLeft(
          (size) => clients.deleteIdle(cutoffs.clientsIdleSince, size),
          PRUNE_BATCH,
          restAsLong
        )
      }
      if (!isEmptyReport(report)) yield* space.reclaim("incremental")
      return report
    })

    /** What a sweep would delete now, deleting nothing. */
    const pending = Effect.fn("Pruning.pending")(function* () {
      const cutoffs = cutoffsAt(yield* DateTime.now)
      const ofSessions = yield* sessions.pending(cutoffs)
      return {
        ...ofSessions,
        auditEvents: yield* log.countBefore(cutoffs.auditBefore),
        signInRequests: yield* signIns.countExpired(cutoffs.signInRequestsExpiredBefore),
        addressChanges: yield* addressChanges.countExpired(cutoffs.signInRequestsExpiredBefore),
        webhookMessages: yield* outbox.countSettledBefore(cutoffs.webhookMessagesSettledBefore),
        providerCodes: yield* codes.countExpired(cutoffs.sessionsEndedBefore),
        parkedRequests: yield* parked.countExpired(cutoffs.signInRequestsExpiredBefore),
        providerGrants: yield* grants.countEnded(cutoffs.sessionsEndedBefore),
        idleClients: yield* clients.countIdle(cutoffs.clientsIdleSince)
      } satisfies PruneReport
    })

    /** The whole file rewritten (`portcullis prune --vacuum`): its size before and after, none for a store without a file. */
    const vacuum = space.reclaim("full")

    return { prune, pending, vacuum } as const
  })
}) {}

/**
 * For as long as the service serves: a sweep every `interval`, the first right away (the layer
 * is built once the server listens). A failed sweep is logged and tried again at the next turn;
 * every worker sweeps, and a row deleted twice is deleted once. Reads Effect's Clock, so the
 * TestClock drives it.
 */
export const pruneEvery = (interval: Duration.Duration) =>
  Layer.scopedDiscard(
    Effect.flatMap(Pruning, (pruning) =>
      pruning.prune().pipe(
        Effect.tap((report) =>
          isEmptyReport(report) ? Effect.void : Effect.logInfo("pruned what has outlived its purpose", report)
        ),
        Effect.catchTag("StoreUnavailableError", (error) => Effect.logWarning("prune sweep failed", error)),
        Effect.repeat(Schedule.spaced(interval)),
        Effect.forkScoped
      )
    )
  )
