import { DateTime, Duration } from "effect"
import { retentionCutoff } from "./Audit.js"

/**
 * Data over time: what a sweep may delete, as instants before which a row's purpose has ended
 * (docs/operating.md, "Data over time"). Each is the latest instant the rule allows, never earlier
 * than the row is still needed for.
 */
export interface RetentionRules {
  /** A refresh-family's access tokens live this long after their last refresh. */
  readonly accessTokenExpireMinutes: number
  /** Clock skew tolerated on expiry: revocations outlive tokens by this much. */
  readonly jwtLeewaySeconds: number
  /** How long a rotated token's sealed successor is answered again. */
  readonly refreshReuseGraceSeconds: number
  readonly auditRetentionDays: number
  readonly dynamicClientIdleDays: number
}

export interface PruneCutoffs {
  /**
   * A refresh token expired before this can never be accepted again. Until it expires it stays,
   * rotated or not: a rotated token presented late is then still seen, and its family ended.
   */
  readonly tokensExpiredBefore: DateTime.Utc
  /**
   * A family ended (revoked, or expired) before this has no access token left that a clock
   * within the leeway would accept: the record that revokes them is needed no longer.
   */
  readonly sessionsEndedBefore: DateTime.Utc
  /** A sealed successor of a token rotated before this is past the reuse grace window. */
  readonly sealedRotatedBefore: DateTime.Utc
  /** Audit events that occurred before this are past AUDIT_RETENTION_DAYS. */
  readonly auditBefore: DateTime.Utc
  /** A sign-in request by mail that expired before this can never be confirmed. */
  readonly signInRequestsExpiredBefore: DateTime.Utc
  /** A webhook message delivered, or dead, before this is past WEBHOOK_MESSAGE_RETENTION. */
  readonly webhookMessagesSettledBefore: DateTime.Utc
  /** A self-registered client not used since this (created, or a grant of it used) is idle. */
  readonly clientsIdleSince: DateTime.Utc
}

/** A webhook message delivered, or dead, this long ago has no use left: an operator had a week to send a dead one again. */
export const WEBHOOK_MESSAGE_RETENTION = Duration.days(7)

export const pruneCutoffs = (rules: RetentionRules, now: DateTime.Utc): PruneCutoffs => ({
  tokensExpiredBefore: now,
  sessionsEndedBefore: DateTime.subtractDuration(
    now,
    Duration.sum(Duration.minutes(rules.accessTokenExpireMinutes), Duration.seconds(rules.jwtLeewaySeconds))
  ),
  sealedRotatedBefore: DateTime.subtractDuration(now, Duration.seconds(rules.refreshReuseGraceSeconds)),
  auditBefore: retentionCutoff(now, rules.auditRetentionDays),
  signInRequestsExpiredBefore: now,
  webhookMessagesSettledBefore: DateTime.subtractDuration(now, WEBHOOK_MESSAGE_RETENTION),
  clientsIdleSince: DateTime.subtractDuration(now, Duration.days(rules.dynamicClientIdleDays))
})

/**
 * One batch of a sweep's step, which takes its rows in the order of a key (an instant in
 * milliseconds): how many rows it found, how many it deleted (or cleared), and the key it reached.
 * The next batch starts at that key rather than at the lowest: on PostgreSQL the index entries of
 * the rows a batch deleted stay until a vacuum reaches them, and batches that each started from
 * the lowest key would walk all of those again, each a little longer than the last.
 */
export interface PruneBatch {
  readonly found: number
  readonly done: number
  readonly reached: number
}

/** The key a step's first batch starts at: before every instant a store holds. */
export const PRUNE_START = Number.MIN_SAFE_INTEGER

/** At most this many rows in one statement of a sweep, so that none holds the store for long. */
export const PRUNE_BATCH = 1_000

/** How long one batch may hold the store (and on SQLite the event loop) before the next is made smaller. */
export const BATCH_BUDGET_MILLIS = 50

/**
 * The size of the next batch after one of `size` rows took `elapsedMillis`: halved (down to 10)
 * while batches overrun the budget, doubled (up to `max`) while they take under a quarter of it.
 * On a large table, a batch of a thousand rows can take a tenth of a second or more of the event
 * loop (every index of the table updated, the log synced); a smaller one lets requests in sooner.
 */
export const nextBatchSize = (size: number, elapsedMillis: number, max: number): number => {
  if (elapsedMillis > BATCH_BUDGET_MILLIS) return Math.max(10, Math.floor(size / 2))
  if (elapsedMillis < BATCH_BUDGET_MILLIS / 4) return Math.min(max, size * 2)
  return Math.min(max, size)
}

/** What one sweep deleted (or, for a dry run, would delete). */
export interface PruneReport {
  readonly refreshTokens: number
  readonly sessions: number
  readonly sealedSuccessors: number
  readonly auditEvents: number
  /** Sign-in requests by mail that expired unconfirmed. */
  readonly signInRequests: number
  /** Address changes that expired before their links were used, and undos past their window. */
  readonly addressChanges: number
  /** Webhook messages delivered, or dead, a week ago. */
  readonly webhookMessages: number
  /**
   * The OpenID Provider's authorization codes past their life (kept an access token's lifetime
   * more, so that a late replay still ends what the code issued), its parked requests that
   * expired, and its grants that ended.
   */
  readonly providerCodes: number
  readonly parkedRequests: number
  readonly providerGrants: number
  /** Clients that registered themselves and have not been used for OIDC_DYNAMIC_CLIENT_IDLE_DAYS. */
  readonly idleClients: number
}

export const emptyReport: PruneReport = {
  refreshTokens: 0,
  sessions: 0,
  sealedSuccessors: 0,
  auditEvents: 0,
  signInRequests: 0,
  addressChanges: 0,
  webhookMessages: 0,
  providerCodes: 0,
  parkedRequests: 0,
  providerGrants: 0,
  idleClients: 0
}

/** True when a sweep found nothing to delete. */
export const isEmptyReport = (report: PruneReport): boolean =>
  report.refreshTokens +
    report.sessions +
    report.sealedSuccessors +
    report.auditEvents +
    report.signInRequests +
    report.addressChanges +
    report.webhookMessages +
    report.providerCodes +
    report.parkedRequests +
    report.providerGrants +
    report.idleClients ===
  0
