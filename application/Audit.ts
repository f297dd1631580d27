import { Chunk, Context, DateTime, Effect, Option, Stream } from "effect"
import {
  Actor,
  type AuditDetails,
  type AuditEntry,
  type AuditEventType,
  type AuditQuery,
  auditPage,
  boundedDetails
} from "../domain/Audit.js"
import type { ClientInfo } from "../domain/Session.js"
import type { UserId } from "../domain/User.js"
import { AuditLog } from "./ports/AuditLog.js"
import { Transaction } from "./ports/Transaction.js"
import { Webhooks } from "./Webhooks.js"

/**
 * Where the request being served came from, and on whose authority it acts when that is not the
 * subject's own (a superuser through the admin API, an operator through the CLI). The interfaces
 * set it (interfaces/http/auditContext.ts, the admin group, the CLI); the use cases never learn
 * HTTP. Outside any request: nobody, from nowhere.
 */
export class RequestContext extends Context.Reference<RequestContext>()("app/RequestContext", {
  defaultValue: (): { readonly actor: Actor; readonly client: ClientInfo } => ({
    actor: Actor.none,
    client: { ip_address: null, user_agent: null }
  })
}) {}

/** Entries an export reads at a time. */
export const EXPORT_PAGE = 1000

/** An operator's command: the CLI acts, from no network address. */
export const cliContext = { actor: Actor.cli, client: { ip_address: null, user_agent: null } }

/** What a use case says about an event; the time, the client and, by default, the actor come from the request. */
export interface AuditEvent {
  readonly type: AuditEventType
  readonly user_id: UserId | null
  /** The subject acting on their own account; left out, the request's actor. */
  readonly actor?: Actor
  readonly details?: AuditDetails
}

/**
 * Records security events in the audit log (AuditLog), and reads them back. Two ways to record,
 * so that the log never weakens what it records:
 *
 * - `record`, for what protects (a sign-out, a revocation, a lockout, a refused sign-in): the
 *   action has happened and stands whatever the log does; an entry that cannot be written is
 *   logged as an error, its fields with it, and the request goes on.
 * - `append`, for what grants or changes a credential (a sign-in, a role, a password, a linked
 *   provider, a passkey): the use case runs it in the transaction of the change it describes
 *   (Transaction), so nothing is granted unrecorded. The entry's failure is the transaction's:
 *   the change is undone and the request fails as an unavailable store (503).
 *
 * An entry whose type an endpoint subscribes to is written to the webhook outbox with it, in
 * the same transaction (Webhooks).
 */
export class Audit extends Effect.Service<Audit>()("app/Audit", {
  effect: Effect.gen(function* () {
    const log = yield* AuditLog
    const webhooks = yield* Webhooks
    const tx = yield* Transaction

    const entryOf = (event: AuditEvent): Effect.Effect<AuditEntry> =>
      Effect.zipWith(DateTime.now, RequestContext, (now, request) => ({
        occurred_at: now,
        type: event.type,
        user_id: event.user_id,
        actor: event.actor ?? request.actor,
        ip_address: request.client.ip_address,
        user_agent: request.client.user_agent,
        details: boundedDetails(event.details ?? {})
      }))

    /** The entry as webhooks receive it (type audit event): who, from where, and its details. */
    const published = (entry: AuditEntry) =>
      webhooks.publish(
        entry.type,
        entry.user_id,
        {
          user_id: entry.user_id,
          actor: entry.actor,
          ip_address: entry.ip_address,
          user_agent: entry.user_agent,
          details: entry.details
        },
        entry.occurred_at
      )

    /** The entry in the log and, when an endpoint subscribes to its type, in the outbox: in one transaction. */
    const written = (entry: AuditEntry) =>
      Effect.flatMap(webhooks.subscribed(entry.type), (subscribed) =>
        subscribed ? tx.transaction(Effect.zipRight(log.append(entry), published(entry))) : log.append(entry)
      )

    const record = (event: AuditEvent) =>
      Effect.flatMap(entryOf(event), (entry) =>
        written(entry).pipe(
          Effect.catchTag("StoreUnavailableError", () =>
            Effect.logError("audit event not recorded", {
              type: entry.type,
              user_id: entry.user_id,
              actor_kind: entry.actor.kind,
              actor_id: entry.actor.id,
              ip_address: entry.ip_address,
              details: entry.details
            })
          )
        )
      )

    const append = (event: AuditEvent) => Effect.flatMap(entryOf(event), written)

    /** A page of the log, newest first, and the cursor of the next. */
    const list = (query: AuditQuery) =>
      Effect.map(log.list({ ...query, limit: query.limit + 1 }), (read) => auditPage(read, query.limit))

    /**
     * The entries that occurred at or after `since`, oldest first, read a page of `pageSize` at a
     * time as the stream is pulled: a log of any size is exported in bounded memory.
     */
    const exportSince = (since: DateTime.Utc, pageSize = EXPORT_PAGE) =>
      Stream.paginateChunkEffect(0, (after) =>
        Effect.map(log.listSince(since, after, pageSize), (page) => {
          const last = page[page.length - 1]
          return [
            Chunk.unsafeFromArray(page),
            page.length < pageSize || last === undefined ? Option.none() : Option.some(last.id)
          ] as const
        })
      )

    return { record, append, list, exportSince } as const
  })
}) {}
