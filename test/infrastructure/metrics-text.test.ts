import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber, TestClock } from "effect"
import { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import { prometheusText } from "../../infrastructure/metrics/prometheus.js"
import { unavailable } from "../../infrastructure/sql/failures.js"
import { parseSamples, sampleOf } from "../support/prometheus.js"

const storeErrors = (text: string) =>
  sampleOf(parseSamples(text), "portcullis_store_errors_total", { store: "database" })

describe("store errors in the metrics text", () => {
  it.effect("a failed database call and a timed-out one each count once, by store", () =>
    Effect.gen(function* () {
      const render = yield* prometheusText
      const before = storeErrors(yield* render)
      const failed = yield* Effect.exit(
        unavailable(Effect.fail(new SqlError({ cause: new Error("connection refused") })))
      )
      expect(failed).toEqual(Exit.fail(new StoreUnavailableError({ store: "database" })))
      const hung = yield* Effect.fork(unavailable(Effect.never))
      yield* TestClock.adjust(Duration.seconds(5))
      expect(yield* Fiber.await(hung)).toEqual(Exit.fail(new StoreUnavailableError({ store: "database" })))
      expect(storeErrors(yield* render) - before).toBe(2)
    })
  )
})
