import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import { RateLimiter } from "../../application/ports/RateLimiter.js"
import { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import { login, password, register, uniqueEmail } from "../support/flows.js"
import * as TestApp from "../support/TestApp.js"

/** A rate-limit store that never answers, as Redis down would be. */
const failingLimiter = Layer.succeed(
  RateLimiter,
  RateLimiter.of({ hit: () => Effect.fail(new StoreUnavailableError({ store: "rate limits" })) })
)

const warnings: Array<string> = []
const captureWarnings = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ logLevel, message }) => {
    if (logLevel.label === "WARN") warnings.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
  })
)

/** The harness's service, with every rate limit on and the failing store in place of the memory one. */
const withFailingLimiter = (backend: TestApp.Backend) =>
  TestApp.serve(
    TestApp.settingsFor({
      SERVICE_SECRET_KEY: TestApp.testSecretKey,
      SERVICE_DATABASE_URL: backend.databaseUrl,
      ...backend.env,
      SERVICE_AUTH_RATE_LIMIT_ENABLED: "true",
      SERVICE_GLOBAL_RATE_LIMIT: "2/minute"
    }),
    { overrides: failingLimiter }
  ).pipe(Layer.provide(captureWarnings))

for (const backend of TestApp.backends) {
  describe(`a rate-limit store that fails (${backend.name})`, () => {
    layer(withFailingLimiter(backend), { excludeTestServices: true })((it) => {
      it.effect(
        "fails open: requests proceed past every limit, without RateLimit headers, and a warning is logged",
        () =>
          Effect.gen(function* () {
            warnings.length = 0
            const email = uniqueEmail()
            expect((yield* register(email)).status).toBe(202)
            for (let i = 0; i < 7; i++) {
              const reply = yield* login(email, password)
              expect(reply.status).toBe(200)
              expect(reply.headers.get("ratelimit-limit")).toBeNull()
            }
            expect(warnings.length).toBeGreaterThanOrEqual(16)
            expect(warnings.every((line) => line.includes("rate limit skipped"))).toBe(true)
          })
      )
    })
  })
}
