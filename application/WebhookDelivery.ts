import { DateTime, Duration, Effect, Layer, Metric, Option, Random, Schedule } from "effect"
import { AfterFailure, afterFailure, type DeliveryOutcome } from "../domain/Webhook.js"
import { webhookBacklog, webhookBacklogAge, webhookDead, webhookTries } from "./metrics.js"
import { Cryptography } from "./ports/Cryptography.js"
import { Outbox, type OutboxMessage } from "./ports/Outbox.js"
import { WebhookEndpoints } from "./ports/WebhookEndpoints.js"
import { WebhookTransport } from "./ports/WebhookTransport.js"

/** A claim outlives the longest try (10 s) by enough that a live deliverer never loses one. */
export const CLAIM_LEASE = Duration.seconds(30)

/** Messages one round claims; each is the head of its own queue, so they go out side by side. */
export const ROUND_SIZE = 32

/** Tries of one round in flight at once. */
export const ROUND_CONCURRENCY = 8

/** What one round did, for the log and the metrics. */
export interface RoundReport {
  readonly delivered: number
  readonly failed: number
  readonly dead: number
}

/**
 * Sends the outbox's due messages (docs/operating.md, "Webhooks"): claims a round of them, tries each
 * against its endpoint, and records the outcome under the claim: delivered, tried again later on
 * the schedule of domain/Webhook.ts, or dead after the last try. A message whose endpoint is no
 * longer configured is dead at once. Every worker runs rounds; the claim keeps a message to one.
 */
export class WebhookDelivery extends Effect.Service<WebhookDelivery>()("app/WebhookDelivery", {
  effect: Effect.gen(function* () {
    const outbox = yield* Outbox
    const transport = yield* WebhookTransport
    const endpoints = yield* WebhookEndpoints
    const crypto = yield* Cryptography

    const settle = (message: OutboxMessage, claim: string, outcome: DeliveryOutcome) =>
      Effect.gen(function* () {
        const now = yield* DateTime.now
        if (outcome._tag === "Delivered") {
          yield* outbox.delivered(message.seq, claim, now)
          return "delivered" as const
        }
        const next = afterFailure(message.attempts, now, yield* Random.next)
        yield* outbox.failed(message.seq, claim, next, outcome.reason, now)
        return next._tag === "Dead" ? ("dead" as const) : ("failed" as const)
      })

    const deliver = (message: OutboxMessage, claim: string) =>
      Effect.gen(function* () {
        const endpoint = (yield* endpoints.list).find((found) => found.id === message.endpoint)
        if (endpoint === undefined) {
          yield* outbox.failed(message.seq, claim, AfterFailure.Dead(), "endpoint removed", yield* DateTime.now)
          return "dead" as const
        }
        const outcome = yield* transport.send(endpoint, {
          id: message.id,
          body: message.body,
          timestamp: yield* DateTime.now
        })
        return yield* settle(message, claim, outcome)
      })

    /** The outbox's backlog, read into the metrics. */
    const measure = Effect.gen(function* () {
      const backlog = yield* outbox.backlog
      const now = yield* DateTime.now
      yield* Metric.set(webhookBacklog, backlog.pending)
      yield* Metric.set(webhookDead, backlog.dead)
      yield* Metric.set(
        webhookBacklogAge,
        Option.match(backlog.oldest, {
          onNone: () => 0,
          onSome: (oldest) => Math.max(0, (now.epochMillis - oldest.epochMillis) / 1000)
        })
      )
    })

    /** One round: the due messages claimed and tried. */
    const round = Effect.fn("WebhookDelivery.round")(function* () {
      const now = yield* DateTime.now
      const claim = yield* crypto.randomId
      const claimed = yield* outbox.claim(now, DateTime.addDuration(now, CLAIM_LEASE), ROUND_SIZE, claim)
      const outcomes = yield* Effect.forEach(
        claimed,
        (message) =>
          Effect.tap(deliver(message, claim), (outcome) =>
            Metric.increment(Metric.tagged(webhookTries, "outcome", outcome))
          ),
        { concurrency: ROUND_CONCURRENCY }
      )
      return {
        delivered: outcomes.filter((outcome) => outcome === "delivered").length,
        failed: outcomes.filter((outcome) => outcome === "failed").length,
        dead: outcomes.filter((outcome) => outcome === "dead").length
      } satisfies RoundReport
    })

    /** Rounds until one claims nothing: what is due now, sent. */
    const drain = Effect.iterate(
      { delivered: 0, failed: 0, dead: 0, claimed: -1 },
      {
        while: (state) => state.claimed !== 0,
        body: (state) =>
          Effect.map(round(), (report) => ({
            delivered: state.delivered + report.delivered,
            failed: state.failed + report.failed,
            dead: state.dead + report.dead,
            claimed: report.delivered + report.failed + report.dead
          }))
      }
    ).pipe(Effect.map(({ delivered, failed, dead }): RoundReport => ({ delivered, failed, dead })))

    return { round, drain, measure } as const
  })
}) {}

/**
 * For as long as the service serves, when endpoints can exist (configured, or stored in a
 * database by the CLI): what is due sent every `interval`, on every worker (a claim keeps each
 * message to one), in the turns when any endpoint is known. A round that fails (the store down)
 * is logged and tried at the next turn; a message claimed by a deliverer that died is sent again
 * once its lease ends.
 */
export const deliverEvery = (interval: Duration.Duration, enabled: boolean) =>
  enabled
    ? Layer.scopedDiscard(
        Effect.flatMap(Effect.zip(WebhookDelivery, WebhookEndpoints), ([delivery, endpoints]) =>
          Effect.flatMap(endpoints.list, (known) =>
            known.length === 0
              ? Effect.succeed({ delivered: 0, failed: 0, dead: 0 })
              : Effect.zipLeft(delivery.drain, delivery.measure)
          ).pipe(
            Effect.tap((report) =>
              report.delivered + report.failed + report.dead === 0
                ? Effect.void
                : Effect.logDebug("webhook messages sent", report)
            ),
            Effect.catchTag("StoreUnavailableError", (error) => Effect.logWarning("webhook delivery failed", error)),
            Effect.repeat(Schedule.spaced(interval)),
            Effect.forkScoped
          )
        )
      )
    : Layer.empty
