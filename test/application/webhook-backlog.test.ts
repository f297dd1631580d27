import { describe, expect, it } from "@effect/vitest"
import { DateTime, Duration, Effect, Layer, Redacted, TestClock } from "effect"
import { Outbox } from "../../application/ports/Outbox.js"
import { WebhookEndpoints } from "../../application/ports/WebhookEndpoints.js"
import { WebhookDelivery } from "../../application/WebhookDelivery.js"
import { PRUNE_START, WEBHOOK_MESSAGE_RETENTION } from "../../domain/Retention.js"
import * as CryptographyNode from "../../infrastructure/crypto/CryptographyNode.js"
import * as WebhookTransportHttp from "../../infrastructure/webhooks/WebhookTransportHttp.js"
import { type Database, databases } from "../support/databases.js"
import { type ReceivedRequest, webhookReceiver } from "../support/webhookReceiver.js"

/**
 * The outbox stays bounded (docs/operating.md, "Webhooks"): a receiver down for two hours of steady
 * traffic holds back what was written meanwhile, and no more; once it is back the backlog drains
 * on the retry schedule, each message delivered once, and a week later the sweep leaves nothing.
 */

let up = false
let answered = 0
const ids = new Map<string, number>()
/** 503 while the receiver is down; once up, each message is counted by its id. */
const answer = ({ headers }: ReceivedRequest) => {
  if (!up) return 503
  answered++
  const id = String(headers["webhook-id"])
  ids.set(id, (ids.get(id) ?? 0) + 1)
  return 204
}

const secret = `whsec_${Buffer.alloc(32, 3).toString("base64")}`
/** The deliverer over a backend's outbox, the real transport, one endpoint at a receiver started for the test. */
const deliverer = (backend: Database) =>
  Layer.unwrapScoped(
    Effect.map(webhookReceiver({ answer }), (receiver) =>
      WebhookDelivery.Default.pipe(
        Layer.provideMerge(backend.repositories()),
        Layer.provide(WebhookTransportHttp.layer(true)),
        Layer.provide(
          Layer.succeed(WebhookEndpoints, {
            list: Effect.succeed([
              { id: "wh_soak", url: `${receiver.base}/hooks`, secret: Redacted.make(secret), events: "*" as const }
            ])
          })
        ),
        Layer.provide(CryptographyNode.layer(Redacted.make("a-secret-key-of-the-tests-0123456789")))
      )
    )
  )

const MINUTE = Duration.minutes(1)

// A SQLite file runs the same outbox adapter as memory (SQLite in memory): memory and PostgreSQL are the two it has.
for (const backend of databases.filter((database) => database.name !== "sqlite file")) {
  describe.skipIf(backend.skip)(`the outbox while a receiver is down and back (${backend.name})`, () => {
    it.effect(
      "holds what was written while it was down, drains once it is back, each message delivered once; a week on, nothing is left",
      () =>
        Effect.gen(function* () {
          const outbox = yield* Outbox
          const delivery = yield* WebhookDelivery
          ids.clear()
          answered = 0
          let written = 0
          let peak = 0
          // Three hours, a minute a turn: five messages a minute from 20 users, the receiver down
          // for the first two hours; the deliverer runs each minute.
          for (let minute = 0; minute < 180; minute++) {
            up = minute >= 120
            const now = yield* DateTime.now
            yield* outbox.add(
              Array.from({ length: 5 }, (_, n) => ({
                id: `msg_${minute}_${n}`,
                endpoint: "wh_soak",
                user_id: `user-${(minute * 5 + n) % 20}`,
                type: "after_login",
                body: "{}",
                created_at: now
              }))
            )
            written += 5
            yield* delivery.drain
            peak = Math.max(peak, (yield* outbox.backlog).pending)
            yield* TestClock.adjust(MINUTE)
          }
          // Messages of one user go in order: each user's queue waits for its head's next try, at
          // most about two and a half hours after the outage began (the fifth try, 2 h after the
          // fourth), and then drains at once.
          expect(peak).toBeGreaterThanOrEqual(120 * 5)
          let hours = 0
          while ((yield* outbox.backlog).pending > 0 && hours < 12) {
            yield* TestClock.adjust(Duration.hours(1))
            yield* delivery.drain
            hours++
          }
          expect(hours).toBeLessThanOrEqual(2)
          expect(yield* outbox.backlog).toMatchObject({ pending: 0, dead: 0 })
          expect(ids.size).toBe(written)
          expect([...ids.values()].every((count) => count === 1)).toBe(true)
          expect(answered).toBe(written)

          yield* TestClock.adjust(Duration.sum(WEBHOOK_MESSAGE_RETENTION, Duration.hours(1)))
          const before = DateTime.subtractDuration(yield* DateTime.now, WEBHOOK_MESSAGE_RETENTION)
          let left = PRUNE_START
          for (;;) {
            const batch = yield* outbox.prune("delivered", before, 1_000, left)
            if (batch.found === 0) break
            left = batch.reached
          }
          expect(yield* outbox.countSettledBefore(yield* DateTime.now)).toBe(0)
        }).pipe(Effect.provide(deliverer(backend))),
      240_000
    )
  })
}
