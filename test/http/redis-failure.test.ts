import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Logger } from "effect"
import { call, expectProblem, login, me, password, register, uniqueEmail } from "../support/flows.js"
import { type PrivateRedis, privateRedis, redisCommand } from "../support/privateRedis.js"
import { parseSamples } from "../support/prometheus.js"
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

const logged: Array<{ readonly level: string; readonly text: string }> = []
const captureLogs = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ logLevel, message }) => {
    logged.push({ level: logLevel.label, text: (Array.isArray(message) ? message : [message]).map(String).join(" ") })
  })
)
const linesAt = (level: string) => logged.filter((line) => line.level === level).map((line) => line.text)

/** The service with REDIS_URL on the private Redis, every rate limit and lockout on, metrics on the API's port. */
const withPrivateRedis = Layer.unwrapEffect(
  Effect.map(OwnRedis, (redis) =>
    TestApp.serve(
      TestApp.settingsFor({
        SERVICE_SECRET_KEY: TestApp.testSecretKey,
        SERVICE_DATABASE_URL: "memory:",
        SERVICE_REDIS_URL: redis.url,
        SERVICE_AUTH_RATE_LIMIT_ENABLED: "true",
        SERVICE_LOCKOUT_ENABLED: "true",
        SERVICE_MAX_LOGIN_ATTEMPTS: "5",
        SERVICE_METRICS_ENABLED: "true",
        SERVICE_TRUSTED_PROXY_HEADERS: "x-forwarded-for"
      })
    )
  )
).pipe(Layer.provideMerge(ownRedis), Layer.provide(captureLogs))

/** A client address of its own: the rate limits count per address. */
let addresses = 0
const from = () => ({ "x-forwarded-for": `203.0.113.${++addresses}` })

const readiness = Effect.flatMap(TestApp.TestApp, (app) => app.request("GET", "/readyz"))
const protectionsGauge = Effect.flatMap(TestApp.TestApp, (app) =>
  Effect.map(app.request("GET", "/metrics"), (reply) => parseSamples(reply.text).get("portcullis_protections_local"))
)

// Runs where Redis suites run (TEST_REDIS_URL set: redis-server is installed), on a Redis of its own.
describe.skipIf(testRedisUrl === undefined)("a Redis that goes away and comes back", () => {
  layer(withPrivateRedis, { excludeTestServices: true })((it) => {
    it.effect(
      "while down: signed-in requests go on, rate limits and lockout hold, counted in the process, said once a minute, by the gauge and /readyz; afterwards they count in Redis again without a restart",
      () =>
        Effect.gen(function* () {
          const redis = yield* OwnRedis
          const email = uniqueEmail()
          const victim = uniqueEmail()
          expect((yield* register(email)).status).toBe(202)
          expect((yield* register(victim)).status).toBe(202)
          const signedIn = yield* login(email, password, from())
          expect(signedIn.status).toBe(200)
          expect(signedIn.headers.get("ratelimit-limit")).toBe("5")
          const access = (signedIn.body as { access_token: string }).access_token
          expect((yield* me(access)).status).toBe(200)
          expect((yield* readiness).body).toEqual({ status: "ready" })
          expect(yield* protectionsGauge).toBe(0)

          const before = (yield* login(email, password, from())).body as { access_token: string }
          expect((yield* call("POST", "/logout", { token: before.access_token })).status).toBe(204)

          yield* Effect.promise(redis.kill)
          logged.length = 0

          expect((yield* me(access)).status).toBe(200)

          // Six sign-ins in a minute from one address: the sixth is refused.
          const client = from()
          const statuses: Array<number> = []
          for (let i = 0; i < 6; i++) statuses.push((yield* login(email, password, client)).status)
          expect(statuses).toEqual([200, 200, 200, 200, 200, 429])

          // Five wrong passwords, each from an address of its own, lock the account: the right one then gets 423.
          for (let i = 0; i < 5; i++) expect((yield* login(victim, "wrong password", from())).status).toBe(401)
          expectProblem(yield* login(victim, password, from()), 423, "AccountLockedError")

          expect(yield* protectionsGauge).toBe(1)
          const ready = yield* readiness
          expect(ready.status).toBe(200)
          expect(ready.body).toEqual({ status: "ready", protections: "local" })

          // However many requests meet it, the fault is an error line once a minute.
          for (let i = 0; i < 10; i++) yield* login(uniqueEmail(), "wrong password", from())
          expect(linesAt("ERROR")).toEqual([
            "redis unusable: rate limits and lockout count in each process on its own until it answers again"
          ])
          expect(logged.map((line) => line.text).join("\n")).not.toContain(redis.url)

          expect((yield* TestApp.TestApp.pipe(Effect.flatMap((app) => app.request("GET", "/healthz")))).status).toBe(
            200
          )
          const during = (yield* login(email, password, from())).body as { access_token: string }
          expect((yield* call("POST", "/logout", { token: during.access_token })).status).toBe(204)

          yield* Effect.promise(redis.start)
          // Redis is tried again in the background: no restart, only a little patience.
          let again = yield* readiness
          for (let i = 0; i < 100 && (again.body as { protections?: string }).protections !== undefined; i++) {
            yield* Effect.sleep("100 millis")
            again = yield* readiness
          }
          expect(again.body).toEqual({ status: "ready" })
          expect(yield* protectionsGauge).toBe(0)
          expect(linesAt("ERROR")).toHaveLength(1)
          // Counted in Redis again (it came back empty): the sign-in leaves its key there.
          expect((yield* login(email, password, from())).status).toBe(200)
          expect(yield* Effect.promise(() => redisCommand(redis.port, "KEYS", "portcullis:ratelimit:*"))).toBe("*1")
          expect((yield* me(access)).status).toBe(200)
          // Redis came back empty: the sessions ended before and during the outage stay ended.
          expectProblem(yield* me(before.access_token), 401, "TokenBlacklistedError")
          expectProblem(yield* me(during.access_token), 401, "TokenBlacklistedError")
        }),
      30_000
    )
  })
})
