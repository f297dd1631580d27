import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect } from "effect"
import { type StoredWebhookEndpoint, WebhookEndpointRepo } from "../../application/ports/WebhookEndpoints.js"
import { databases } from "../support/databases.js"

const endpoint = (id: string, url: string, events: StoredWebhookEndpoint["events"] = "*"): StoredWebhookEndpoint => ({
  id,
  url,
  sealed_secret: `sealed-${id}`,
  events,
  created_at: DateTime.unsafeMake(Number(id.replace(/\D/g, "")) * 1_000)
})

for (const backend of databases) {
  const run = <A, E>(effect: Effect.Effect<A, E, WebhookEndpointRepo>) =>
    effect.pipe(Effect.provide(backend.repositories()))

  describe.skipIf(backend.skip)(`WebhookEndpointRepo contract (${backend.name})`, () => {
    it.effect("keeps endpoints as added, oldest first; one URL once; removes by id", () =>
      run(
        Effect.gen(function* () {
          const repo = yield* WebhookEndpointRepo
          expect(
            yield* repo.add(endpoint("wh_2", "https://b.example/hook", ["after_register", "session.revoked"]))
          ).toBe(true)
          expect(yield* repo.add(endpoint("wh_1", "https://a.example/hook"))).toBe(true)
          expect(yield* repo.add(endpoint("wh_3", "https://a.example/hook"))).toBe(false)
          expect(yield* repo.all).toEqual([
            endpoint("wh_1", "https://a.example/hook"),
            endpoint("wh_2", "https://b.example/hook", ["after_register", "session.revoked"])
          ])
          expect(yield* repo.remove("wh_1")).toBe(true)
          expect(yield* repo.remove("wh_1")).toBe(false)
          expect((yield* repo.all).map((row) => row.id)).toEqual(["wh_2"])
          // The URL is free again once its endpoint is gone.
          expect(yield* repo.add(endpoint("wh_4", "https://a.example/hook"))).toBe(true)
        })
      )
    )
  })
}
