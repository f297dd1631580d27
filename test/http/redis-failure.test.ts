import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Logger } from "effect"
import { call, expectProblem, login, me, password, register, uniqueEmail } from "../support/flows.js"
import { type PrivateRedis, privateRedis } from "../support/privateRedis.js"
import { testRedisUrl } from "../support/redis.js"
import * as TestApp from "../support/TestApp.js"

/** A redis-server of this test's own on a spare port, without persistence, that it can stop and start. */
class OwnRedis extends Context.Tag("test/OwnRedis")<OwnRedis, PrivateRedis>() {}

const ownRedis = Layer.scoped(
  OwnRedis,
  Effect.acquireRelease(
    Effect.promise(async () => {
      const redis = await privateRedis()
      await redis.start()
      return redis
    }),
    (redis) => Effect.promise(redis.remove)
  )
)

const warnings: Array<string> = []
const captureWarnings = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ logLevel, message }) => {
    if (logLevel.label === "WARN") warnings.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
  })
)

/** The service with REDIS_URL on the private Redis and every rate limit on. */
const withPrivateRedis = Layer.unwrapEffect(
  Effect.map(OwnRedis, (redis) =>
    TestApp.serve(
      TestApp.settingsFor({
        SERVICE_SECRET_KEY: TestApp.testSecretKey,
        SERVICE_DATABASE_URL: "memory:",
        SERVICE_REDIS_URL: redis.url,
        SERVICE_AUTH_RATE_LIMIT_ENABLED: "true"
      })
    )
  )
).pipe(Layer.provideMerge(ownRedis), Layer.provide(captureWarnings))

// Runs where Redis suites run (TEST_REDIS_URL set: redis-server is installed), on a Redis of its own.
describe.skipIf(testRedisUrl === undefined)("a Redis that goes away and comes back", () => {
  layer(withPrivateRedis, { excludeTestServices: true })((it) => {
    it.effect(
      "while down: signed-in requests go on from the database's record, rate limits and lockout fail open with a warning; afterwards everything works again without a restart",
      () =>
        Effect.gen(function* () {
          const redis = yield* OwnRedis
          const app = yield* TestApp.TestApp
          const email = uniqueEmail()
          expect((yield* register(email)).status).toBe(202)
          const signedIn = yield* login(email, password)
          expect(signedIn.status).toBe(200)
          expect(signedIn.headers.get("ratelimit-limit")).toBe("5")
          const access = (signedIn.body as { access_token: string }).access_token
          expect((yield* me(access)).status).toBe(200)

          const before = (yield* login(email, password)).body as { access_token: string }
          expect((yield* call("POST", "/logout", { token: before.access_token })).status).toBe(204)

          yield* Effect.promise(redis.kill)
          warnings.length = 0

          expect((yield* me(access)).status).toBe(200)

          const loggedIn = yield* login(email, password)
          expect(loggedIn.status).toBe(200)
          expect(loggedIn.headers.get("ratelimit-limit")).toBeNull()
          expect((yield* login(email, "wrong password")).status).toBe(401)
          expect(warnings.some((line) => line.includes("rate limit skipped"))).toBe(true)
          expect(warnings.some((line) => line.includes("lockout skipped"))).toBe(true)
          expect(warnings.join("\n")).not.toContain(redis.url)
          expect((yield* app.request("GET", "/healthz")).status).toBe(200)
          const during = (yield* login(email, password)).body as { access_token: string }
          expect((yield* call("POST", "/logout", { token: during.access_token })).status).toBe(204)

          yield* Effect.promise(redis.start)
          // The connection is retried in the background: no restart, only a little patience.
          let again = yield* login(email, password)
          for (let i = 0; i < 100 && again.headers.get("ratelimit-limit") === null; i++) {
            yield* Effect.sleep("100 millis")
            again = yield* login(email, password)
          }
          expect(again.status).toBe(200)
          expect(again.headers.get("ratelimit-limit")).toBe("5")
          expect((yield* me(access)).status).toBe(200)
          // Redis came back empty: the sessions ended before and during the outage stay ended.
          expectProblem(yield* me(before.access_token), 401, "TokenBlacklistedError")
          expectProblem(yield* me(during.access_token), 401, "TokenBlacklistedError")
        }),
      30_000
    )
  })
})
