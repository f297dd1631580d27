import { Context, type DateTime, type Effect, type Option } from "effect"
import type { PruneBatch } from "../../domain/Retention.js"
import type { AfterFailure } from "../../domain/Webhook.js"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/** A message for one endpoint, as a use case writes it with the change it reports. */
export interface NewOutboxMessage {
  /** The message's id as the receiver sees it (`webhook-id`): the same on every try. */
  readonly id: string
  /** The endpoint it goes to. */
  readonly endpoint: string
  /** The user it is about: messages of one user to one endpoint go in the order written. */
  readonly user_id: string | null
  readonly type: string
  /** The JSON body, as signed. */
  readonly body: string
  readonly created_at: DateTime.Utc
}

/** A message claimed by one deliverer. */
export interface OutboxMessage extends NewOutboxMessage {
  /** Its place in the outbox: the order messages were written in. */
  readonly seq: number
  /**
   * Tries so far, this one included. A try counts once its outcome is recorded: a claim lost with
   * its deliverer (a crash) is no try, and its message is claimed again once the lease ends.
   */
  readonly attempts: number
}

/** Messages waiting, and the oldest of them, for the metrics. */
export interface OutboxBacklog {
  /** Neither delivered nor dead. */
  readonly pending: number
  readonly oldest: Option.Option<DateTime.Utc>
  readonly dead: number
}

/** Which messages `prune` deletes: those delivered, or dead, before the cutoff. */
export type OutboxPruneStep = "delivered" | "dead"

/**
 * The transactional outbox (docs/operating.md, "Webhooks"). `add` joins the caller's transaction
 * (Transaction), so that a message exists if and only if its change committed. A deliverer
 * `claim`s due messages for a lease: one deliverer a message, on any worker, and a message whose
 * deliverer died is claimed again once its lease ends. A claim is answered by `delivered` or
 * `failed` under the same claim token; one whose lease ended and was claimed again changes
 * nothing (false).
 */
export class Outbox extends Context.Tag("app/Outbox")<
  Outbox,
  {
    readonly add: (messages: ReadonlyArray<NewOutboxMessage>) => Effect.Effect<void, StoreUnavailableError>
    /**
     * At most `limit` messages due at `now` (not delivered, not dead, their next try not later,
     * no lease running), each the first of its user's undelivered messages to its endpoint, in
     * the order written; each claimed under `claim` until `leaseUntil`.
     */
    readonly claim: (
      now: DateTime.Utc,
      leaseUntil: DateTime.Utc,
      limit: number,
      claim: string
    ) => Effect.Effect<ReadonlyArray<OutboxMessage>, StoreUnavailableError>
    /** A try delivered it: counted, and done. */
    readonly delivered: (seq: number, claim: string, now: DateTime.Utc) => Effect.Effect<boolean, StoreUnavailableError>
    /** A failed try, counted: the message waits for its next, or is dead; `error` says why, for the operator. */
    readonly failed: (
      seq: number,
      claim: string,
      next: AfterFailure,
      error: string,
      now: DateTime.Utc
    ) => Effect.Effect<boolean, StoreUnavailableError>
    /** Dead messages (one by its id, or every one) made due again at `now` with their tries reset; answers how many. */
    readonly resend: (
      which: { readonly id: string } | "dead",
      now: DateTime.Utc
    ) => Effect.Effect<number, StoreUnavailableError>
    readonly backlog: Effect.Effect<OutboxBacklog, StoreUnavailableError>
    /** How many messages were delivered, or died, before `before`: what a sweep would delete. */
    readonly countSettledBefore: (before: DateTime.Utc) => Effect.Effect<number, StoreUnavailableError>
    /** One batch of a sweep (Pruning): messages delivered, or dead, before `before`, keyed by that time. */
    readonly prune: (
      step: OutboxPruneStep,
      before: DateTime.Utc,
      limit: number,
      from: number
    ) => Effect.Effect<PruneBatch, StoreUnavailableError>
  }
>() {}
