import { DateTime, Duration } from "effect"
import { retentionCutoff } from "./Audit.js"

/**
 * Data over time: what a sweep may delete, as instants before which a row's purpose has ended
 * (DECISIONS.md, "Data over time"). Each is the latest instant the rule allows, never earlier
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
}

export const pruneCutoffs = (rules: RetentionRules, now: DateTime.Utc): PruneCutoffs => ({
  tokensExpiredBefore: now,
  sessionsEndedBefore: DateTime.subtractDuration(
    now,
    Duration.sum(Duration.minutes(rules.accessTokenExpireMinutes), Duration.seconds(rules.jwtLeewaySeconds))
  ),
  sealedRotatedBefore: DateTime.subtractDuration(now, Duration.seconds(rules.refreshReuseGraceSeconds)),
  auditBefore: retentionCutoff(now, rules.auditRetentionDays)
})

/** At most this many rows in one statement of a sweep, so that none holds the store for long. */
export const PRUNE_BATCH = 1_000

/** What one sweep deleted (or, for a dry run, would delete). */
export interface PruneReport {
  readonly refreshTokens: number
  readonly sessions: number
  readonly sealedSuccessors: number
  readonly auditEvents: number
}

export const emptyReport: PruneReport = { refreshTokens: 0, sessions: 0, sealedSuccessors: 0, auditEvents: 0 }

/** True when a sweep found nothing to delete. */
export const isEmptyReport = (report: PruneReport): boolean =>
  report.refreshTokens + report.sessions + report.sealedSuccessors + report.auditEvents === 0
