import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { parseSamples } from "../support/prometheus.js"
import * as TestApp from "../support/TestApp.js"

// With REDIS_URL the gauge moves (test/http/redis-failure.test.ts); without, it is there all the
// same, so that one alert covers every deployment.
describe("the protections gauge without REDIS_URL", () => {
  layer(TestApp.layer("memory:", { SERVICE_METRICS_ENABLED: "true" }), { excludeTestServices: true })((it) => {
    it.effect("is in the metrics at 0: rate limits and lockout count where they always do", () =>
      Effect.gen(function* () {
        const app = yield* TestApp.TestApp
        const samples = parseSamples((yield* app.request("GET", "/metrics")).text)
        expect(samples.get("portcullis_protections_local")).toBe(0)
        expect((yield* app.request("GET", "/readyz")).body).toEqual({ status: "ready" })
      })
    )
  })
})
