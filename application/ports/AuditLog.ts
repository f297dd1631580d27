import { Context, type DateTime, type Effect } from "effect"
import type { AuditEntry, AuditQuery, AuditRecord } from "../../domain/Audit.js"
import type { PruneBatch } from "../../domain/Retention.js"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/**
 * The audit log: security events, kept in the database with the records they are about (never in
 * a cache), read newest first, deleted once past their retention period. Entries outlive the
 * users they name: deleting a user keeps its history. An entry that must commit with the change it
 * describes is appended inside the use case's transaction (Transaction), like any other write.
 */
export class AuditLog extends Context.Tag("app/AuditLog")<
  AuditLog,
  {
    readonly append: (entry: AuditEntry) => Effect.Effect<void, StoreUnavailableError>
    /** The entries the query selects, newest first, at most `limit` of them. */
    readonly list: (query: AuditQuery) => Effect.Effect<ReadonlyArray<AuditRecord>, StoreUnavailableError>
    /**
     * The entries that occurred at or after `since` with ids above `after`, oldest first (id
     * order), at most `limit`: an export's page, each starting where the last one ended.
     */
    readonly listSince: (
      since: DateTime.Utc,
      after: number,
      limit: number
    ) => Effect.Effect<ReadonlyArray<AuditRecord>, StoreUnavailableError>
    /**
     * Deletes at most `limit` of the entries that occurred before `cutoff`, oldest first, from
     * those that occurred at or after `from` (a sweep's batch, keyed by the time of occurrence).
     */
    readonly deleteBefore: (
      cutoff: DateTime.Utc,
      limit: number,
      from: number
    ) => Effect.Effect<PruneBatch, StoreUnavailableError>
    /** How many entries occurred before `cutoff`. */
    readonly countBefore: (cutoff: DateTime.Utc) => Effect.Effect<number, StoreUnavailableError>
  }
>() {}
