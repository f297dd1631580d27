import { Context, type DateTime, type Effect } from "effect"
import type { AuditEntry, AuditQuery, AuditRecord } from "../../domain/Audit.js"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/**
 * The audit log: security events, kept in the database with the records they are about (never in
 * a cache), read newest first, deleted once past their retention period. Entries outlive the
 * users they name: deleting a user keeps its history.
 */
export class AuditLog extends Context.Tag("app/AuditLog")<
  AuditLog,
  {
    readonly append: (entry: AuditEntry) => Effect.Effect<void, StoreUnavailableError>
    /**
     * Runs `action`, then appends the entry it describes (none when the action changed nothing), in one transaction of the database: the
     * action's writes and its entry commit together, or neither does. `action` must be a few
     * writes of the same database, nothing slow (no hashing): the transaction holds a connection,
     * and SQLite's only one. A store without transactions (memory) runs one after the other.
     */
    readonly appendWith: <A, E, R>(
      action: Effect.Effect<A, E, R>,
      entry: (result: A) => Effect.Effect<AuditEntry | null>
    ) => Effect.Effect<A, E | StoreUnavailableError, R>
    /** The entries the query selects, newest first, at most `limit` of them. */
    readonly list: (query: AuditQuery) => Effect.Effect<ReadonlyArray<AuditRecord>, StoreUnavailableError>
    /** Deletes the entries that occurred before `cutoff`; answers how many. */
    readonly deleteBefore: (cutoff: DateTime.Utc) => Effect.Effect<number, StoreUnavailableError>
  }
>() {}
