import { randomBytes } from "node:crypto"
import type { ServerResponse } from "node:http"
import { Socket } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Layer, Metric, MetricState, Redacted, TestClock } from "effect"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, vi } from "vitest"
import { webhookBacklog, webhookDead, webhookTries } from "../../application/metrics.js"
import { Outbox } from "../../application/ports/Outbox.js"
import { WebhookEndpoints } from "../../application/ports/WebhookEndpoints.js"
import { WebhookDelivery } from "../../application/WebhookDelivery.js"
import { DeliveryOutcome, type WebhookEndpoint } from "../../domain/Webhook.js"
import * as CryptographyNode from "../../infrastructure/crypto/CryptographyNode.js"
import { isPrivateAddress } from "../../infrastructure/net/addressGuard.js"
import * as OutboxSql from "../../infrastructure/sql/OutboxSql.js"
import * as SqliteDatabase from "../../infrastructure/sql/SqliteDatabase.js"
import * as WebhookTransportHttp from "../../infrastructure/webhooks/WebhookTransportHttp.js"
import { type Answer, startWebhookReceiver, type WebhookReceiver } from "../support/webhookReceiver.js"

/**
 * The deliverer against a real HTTP receiver in this process (docs/operating.md, "Webhooks"): signed
 * to the Standard Webhooks specification, tried again after each failure and then no more, cut
 * at 10 s, no redirect followed, an answer read no further than 1 MiB, private addresses refused
 * unless allowed.
 */

const secret = `whsec_${randomBytes(24).toString("base64")}`

/** What the receiver answers on each path, one a request; the last stays, 200 when none is set. */
const answers = new Map<string, Array<Answer>>()
let receiver: WebhookReceiver

beforeAll(async () => {
  receiver = await startWebhookReceiver({
    answer: ({ path }) => {
      const queue = answers.get(path) ?? []
      return queue.length > 1 ? queue.shift() : queue[0]
    }
  })
})
afterAll(() => receiver.close())

/** Answers 200, then writes a body without end until the connection is gone. */
const endless = (response: ServerResponse) => {
  response.writeHead(200)
  const chunk = Buffer.alloc(64 * 1024, 120)
  const write = () => {
    while (response.write(chunk)) {
      if (response.destroyed) return
    }
    response.once("drain", write)
  }
  write()
}

const endpoint = (path: string, id = path): WebhookEndpoint => ({
  id,
  url: `${receiver.base}${path}`,
  secret: Redacted.make(secret),
  events: "*"
})

const deliverer = (configured: ReadonlyArray<WebhookEndpoint>, allowPrivate = true) =>
  WebhookDelivery.Default.pipe(
    Layer.provideMerge(OutboxSql.layer.pipe(Layer.provide(SqliteDatabase.layer(":memory:")))),
    Layer.provide(WebhookTransportHttp.layer(allowPrivate)),
    Layer.provide(Layer.succeed(WebhookEndpoints, { list: Effect.succeed(configured) })),
    Layer.provide(CryptographyNode.layer(Redacted.make("a-secret-key-of-the-tests-0123456789")))
  )

/** One message to `endpointId`, written now. */
const written = (endpointId: string, id: string) =>
  Effect.flatMap(Effect.zip(Outbox, DateTime.now), ([outbox, now]) =>
    outbox.add([
      {
        id,
        endpoint: endpointId,
        user_id: "user-1",
        type: "after_register",
        body: JSON.stringify({ type: "after_register", timestamp: DateTime.formatIso(now), data: { id: "user-1" } }),
        created_at: now
      }
    ])
  )

const on = (path: string) => receiver.received.filter((request) => request.path === path)
// Past the longest wait (10 h) and its jitter (a fifth more): each round finds its message due.
const HOUR = 3_600_000

describe("webhook delivery to a real receiver", () => {
  it.effect(
    "signs to Standard Webhooks: the reference implementation verifies it, and refuses a tampered body, a wrong secret and a stale time",
    () =>
      Effect.gen(function* () {
        const delivery = yield* WebhookDelivery
        yield* TestClock.setTime(Date.now())
        yield* written("/signed", "msg_signed")
        expect(yield* delivery.round()).toEqual({ delivered: 1, failed: 0, dead: 0 })
        const [request] = on("/signed")
        const headers = request?.headers as Record<string, string>
        expect(headers["webhook-id"]).toBe("msg_signed")
        expect(headers["content-type"]).toBe("application/json")
        const body = request?.body as string
        expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body))
        expect(() => new Webhook(secret).verify(body.replace("user-1", "user-2"), headers)).toThrow()
        expect(() => new Webhook(`whsec_${randomBytes(24).toString("base64")}`).verify(body, headers)).toThrow()
        const stale = WebhookTransportHttp.signedHeaders(secret, "msg_signed", new Date(Date.now() - 10 * 60_000), body)
        expect(() => new Webhook(secret).verify(body, stale)).toThrow(/timestamp/i)
      }).pipe(Effect.provide(deliverer([endpoint("/signed")])))
  )

  it.effect(
    "a receiver answering 500 three times then 200 gets the message once more after each failure, then no more",
    () =>
      Effect.gen(function* () {
        answers.set("/flaky", [500, 500, 500, 200])
        const delivery = yield* WebhookDelivery
        yield* written("/flaky", "msg_flaky")
        const reports = []
        for (let round = 0; round < 6; round++) {
          reports.push(yield* delivery.round())
          // Not due again before its wait: a round at once sends nothing.
          expect(yield* delivery.round()).toEqual({ delivered: 0, failed: 0, dead: 0 })
          yield* TestClock.adjust(13 * HOUR)
        }
        expect(reports.map((report) => [report.delivered, report.failed])).toEqual([
          [0, 1],
          [0, 1],
          [0, 1],
          [1, 0],
          [0, 0],
          [0, 0]
        ])
        const tries = on("/flaky")
        expect(tries).toHaveLength(4)
        yield* delivery.measure
        expect(yield* Metric.value(webhookBacklog)).toEqual(MetricState.gauge(0))
        expect(new Set(tries.map((request) => request.headers["webhook-id"]))).toEqual(new Set(["msg_flaky"]))
      }).pipe(Effect.provide(deliverer([endpoint("/flaky")])))
  )

  it.effect("after the eighth failure a message is dead, and counted so", () =>
    Effect.gen(function* () {
      answers.set("/down", [503])
      const delivery = yield* WebhookDelivery
      yield* written("/down", "msg_down")
      const outcomes = []
      for (let round = 0; round < 9; round++) {
        outcomes.push(yield* delivery.round())
        yield* TestClock.adjust(13 * HOUR)
      }
      expect(outcomes.map((report) => report.dead)).toEqual([0, 0, 0, 0, 0, 0, 0, 1, 0])
      expect(on("/down")).toHaveLength(8)
      expect((yield* (yield* Outbox).backlog).dead).toBe(1)
      yield* delivery.measure
      expect(yield* Metric.value(webhookDead)).toEqual(MetricState.gauge(1))
      const dead = yield* Metric.value(Metric.tagged(webhookTries, "outcome", "dead"))
      expect(dead.count).toBeGreaterThanOrEqual(1)
    }).pipe(Effect.provide(deliverer([endpoint("/down")])))
  )

  it.live(
    "a receiver that does not answer is cut at 10 s",
    () =>
      Effect.gen(function* () {
        answers.set("/hang", [() => {}])
        const delivery = yield* WebhookDelivery
        yield* written("/hang", "msg_hang")
        const started = Date.now()
        expect(yield* delivery.round()).toEqual({ delivered: 0, failed: 1, dead: 0 })
        const took = Date.now() - started
        expect(took).toBeGreaterThanOrEqual(9_900)
        expect(took).toBeLessThan(13_000)
        // The receiver sees its connection closed, its answer never written.
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 200)))
        expect(receiver.closedEarly).toContain("/hang")
      }).pipe(Effect.provide(deliverer([endpoint("/hang")]))),
    30_000
  )

  it.effect("a redirect is not followed: the try failed, and the place it points to hears nothing", () =>
    Effect.gen(function* () {
      answers.set("/moved", [(response) => response.writeHead(307, { location: `${receiver.base}/elsewhere` }).end()])
      const delivery = yield* WebhookDelivery
      yield* written("/moved", "msg_moved")
      expect(yield* delivery.round()).toEqual({ delivered: 0, failed: 1, dead: 0 })
      const [moved] = on("/moved")
      expect(moved?.headers["webhook-id"]).toBe("msg_moved")
      expect(on("/elsewhere")).toHaveLength(0)
    }).pipe(Effect.provide(deliverer([endpoint("/moved")])))
  )

  it.effect("an endless answer is read no further than 1 MiB: the try ends, delivered by its status", () =>
    Effect.gen(function* () {
      answers.set("/endless", [endless])
      const delivery = yield* WebhookDelivery
      yield* written("/endless", "msg_endless")
      expect(yield* delivery.round()).toEqual({ delivered: 1, failed: 0, dead: 0 })
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 200)))
      expect(receiver.closedEarly).toContain("/endless")
    }).pipe(Effect.provide(deliverer([endpoint("/endless")])))
  )

  it.effect(
    "without WEBHOOKS_ALLOW_PRIVATE a private address is refused, by IP or by a name that resolves to one",
    () =>
      Effect.gen(function* () {
        const delivery = yield* WebhookDelivery
        yield* written("/private", "msg_ip")
        yield* written("by-name", "msg_name")
        expect(yield* delivery.drain).toEqual({ delivered: 0, failed: 2, dead: 0 })
        expect(on("/private")).toHaveLength(0)
        expect(receiver.received.filter((request) => request.headers["webhook-id"] === "msg_name")).toHaveLength(0)
        expect(isPrivateAddress("::ffff:127.0.0.1")).toBe(true)
        expect(isPrivateAddress("169.254.169.254")).toBe(true)
        expect(isPrivateAddress("fd00::1")).toBe(true)
        expect(isPrivateAddress("93.184.216.34")).toBe(false)
      }).pipe(
        Effect.provide(
          deliverer(
            [
              endpoint("/private"),
              { ...endpoint("/private", "by-name"), url: `${receiver.base.replace("127.0.0.1", "localhost")}/private` }
            ],
            false
          )
        )
      )
  )

  // Issue 50, finding 5: an outside attack had deliveries tried to these three.
  const literals = ["[::7f00:1]", "[::ffff:0:7f00:1]", "[fec0::1]"]
  const atLiteral = (host: string): WebhookEndpoint => ({
    ...endpoint("/literal", `literal ${host}`),
    url: `${receiver.base.replace("127.0.0.1", host)}/literal`
  })

  it.effect(
    "without WEBHOOKS_ALLOW_PRIVATE IPv4-compatible, IPv4-translated and site-local hosts are refused before any connection",
    () =>
      Effect.gen(function* () {
        const connects = vi.spyOn(Socket.prototype, "connect")
        try {
          const delivery = yield* WebhookDelivery
          for (const host of literals) yield* written(`literal ${host}`, `msg_literal ${host}`)
          expect(yield* delivery.drain).toEqual({ delivered: 0, failed: 3, dead: 0 })
          const transport = WebhookTransportHttp.make(false)
          const message = { id: "msg_literal", body: "{}", timestamp: yield* DateTime.now }
          for (const host of literals) {
            const outcome = yield* transport.send(atLiteral(host), message)
            expect(outcome).toEqual(
              DeliveryOutcome.Failed({ reason: expect.stringContaining(`address ${host.slice(1, -1)} is private (`) })
            )
          }
          expect(connects).not.toHaveBeenCalled()
          expect(on("/literal")).toHaveLength(0)
        } finally {
          connects.mockRestore()
        }
      }).pipe(Effect.provide(deliverer(literals.map(atLiteral), false)))
  )

  it.effect("with WEBHOOKS_ALLOW_PRIVATE loopback is reached, by IP and by name, as before", () =>
    Effect.gen(function* () {
      const delivery = yield* WebhookDelivery
      yield* written("/allowed", "msg_allowed_ip")
      yield* written("allowed by name", "msg_allowed_name")
      expect(yield* delivery.drain).toEqual({ delivered: 2, failed: 0, dead: 0 })
      expect(new Set(on("/allowed").map((request) => request.headers["webhook-id"]))).toEqual(
        new Set(["msg_allowed_ip", "msg_allowed_name"])
      )
    }).pipe(
      Effect.provide(
        deliverer(
          [
            endpoint("/allowed"),
            {
              ...endpoint("/allowed", "allowed by name"),
              url: `${receiver.base.replace("127.0.0.1", "localhost")}/allowed`
            }
          ],
          true
        )
      )
    )
  )

  it.effect("a message for an endpoint no longer configured is dead at once", () =>
    Effect.gen(function* () {
      const delivery = yield* WebhookDelivery
      yield* written("removed", "msg_orphan")
      expect(yield* delivery.round()).toEqual({ delivered: 0, failed: 0, dead: 1 })
    }).pipe(Effect.provide(deliverer([])))
  )
})
