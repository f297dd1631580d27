import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Layer, Option, Redacted, Ref, TestClock } from "effect"
import { Cryptography } from "../../application/ports/Cryptography.js"
import { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import {
  type StoredWebhookEndpoint,
  WebhookEndpointRepo,
  WebhookEndpoints
} from "../../application/ports/WebhookEndpoints.js"
import type { WebhookEndpoint } from "../../domain/Webhook.js"
import * as WebhookEndpointsStored from "../../infrastructure/webhooks/WebhookEndpointsStored.js"

const configured: WebhookEndpoint = {
  id: "wh_setting",
  url: "https://setting.example/hook",
  secret: Redacted.make("whsec_setting"),
  events: "*"
}

const row = (id: string, sealed: string): StoredWebhookEndpoint => ({
  id,
  url: `https://${id}.example/hook`,
  sealed_secret: sealed,
  events: ["after_register"],
  created_at: DateTime.unsafeMake(0)
})

/** A repository whose rows and availability the test sets; sealed secrets are `sealed:<secret>`. */
const harness = Effect.gen(function* () {
  const rows = yield* Ref.make<ReadonlyArray<StoredWebhookEndpoint>>([])
  const down = yield* Ref.make(false)
  const repo = WebhookEndpointRepo.of({
    all: Effect.flatMap(Ref.get(down), (isDown) =>
      isDown ? Effect.fail(new StoreUnavailableError({ store: "database" })) : Ref.get(rows)
    ),
    add: () => Effect.succeed(true),
    remove: () => Effect.succeed(true)
  })
  const crypto = {
    open: (sealed: string) =>
      sealed.startsWith("sealed:") ? Option.some(sealed.slice("sealed:".length)) : Option.none()
  } as unknown as Cryptography["Type"]
  const layer = WebhookEndpointsStored.layer([configured], "5 seconds").pipe(
    Layer.provide(Layer.merge(Layer.succeed(WebhookEndpointRepo, repo), Layer.succeed(Cryptography, crypto)))
  )
  return { rows, down, layer }
})

const ids = Effect.map(
  Effect.flatMap(WebhookEndpoints, (endpoints) => endpoints.list),
  (list) => list.map((endpoint) => endpoint.id)
)

describe("WebhookEndpointsStored", () => {
  it.scoped("answers the setting's endpoints and the stored ones, read again every 5 s", () =>
    Effect.gen(function* () {
      const { rows, layer } = yield* harness
      yield* Ref.set(rows, [row("wh_a", "sealed:whsec_a")])
      const context = yield* Layer.build(layer)
      const list = Effect.provide(ids, context)
      expect(yield* list).toEqual(["wh_setting", "wh_a"])
      const [, stored] = yield* Effect.provide(
        Effect.flatMap(WebhookEndpoints, (endpoints) => endpoints.list),
        context
      )
      expect(stored && Redacted.value(stored.secret)).toBe("whsec_a")

      yield* Ref.set(rows, [row("wh_a", "sealed:whsec_a"), row("wh_b", "sealed:whsec_b")])
      yield* TestClock.adjust("4 seconds")
      expect(yield* list).toEqual(["wh_setting", "wh_a"])
      yield* TestClock.adjust("1 second")
      expect(yield* list).toEqual(["wh_setting", "wh_a", "wh_b"])

      yield* Ref.set(rows, [row("wh_b", "sealed:whsec_b")])
      yield* TestClock.adjust("5 seconds")
      expect(yield* list).toEqual(["wh_setting", "wh_b"])
    })
  )

  it.scoped("keeps the last list while the database cannot be read, and at start keeps the setting's", () =>
    Effect.gen(function* () {
      const { rows, down, layer } = yield* harness
      yield* Ref.set(rows, [row("wh_a", "sealed:whsec_a")])
      yield* Ref.set(down, true)
      const context = yield* Layer.build(layer)
      const list = Effect.provide(ids, context)
      expect(yield* list).toEqual(["wh_setting"])
      yield* Ref.set(down, false)
      yield* TestClock.adjust("5 seconds")
      expect(yield* list).toEqual(["wh_setting", "wh_a"])
      yield* Ref.set(down, true)
      yield* Ref.set(rows, [])
      yield* TestClock.adjust("5 seconds")
      expect(yield* list).toEqual(["wh_setting", "wh_a"])
    })
  )

  it.scoped("leaves out an endpoint whose secret does not open (SECRET_KEY changed)", () =>
    Effect.gen(function* () {
      const { rows, layer } = yield* harness
      yield* Ref.set(rows, [row("wh_a", "sealed under another key"), row("wh_b", "sealed:whsec_b")])
      const context = yield* Layer.build(layer)
      expect(yield* Effect.provide(ids, context)).toEqual(["wh_setting", "wh_b"])
    })
  )
})
