import { type AddressInfo, createServer, type Server } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Duration, Effect, Either, Layer, Redacted } from "effect"
import { AttemptCounter } from "../../application/ports/AttemptCounter.js"
import { Blacklist } from "../../application/ports/Blacklist.js"
import { RateLimiter } from "../../application/ports/RateLimiter.js"
import type { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import * as AttemptCounterRedis from "../../infrastructure/redis/AttemptCounterRedis.js"
import * as BlacklistRedis from "../../infrastructure/redis/BlacklistRedis.js"
import * as RateLimiterRedis from "../../infrastructure/redis/RateLimiterRedis.js"
import * as RedisClient from "../../infrastructure/redis/RedisClient.js"
import { freePort } from "../support/processes.js"
import { clientLayer, keysMatching, testRedisUrl } from "../support/redis.js"

const adapters = Layer.mergeAll(BlacklistRedis.layer, RateLimiterRedis.layer, AttemptCounterRedis.layer)

describe.skipIf(testRedisUrl === undefined)("the Redis adapters", () => {
  it.live("put every key under the prefix, each with a TTL no longer than what it must remember", () =>
    Effect.gen(function* () {
      const client = yield* RedisClient.RedisClient
      const now = yield* DateTime.now
      yield* (yield* Blacklist).burn("state-1", DateTime.addDuration(now, "5 minutes"))
      yield* (yield* RateLimiter).hit("login:203.0.113.9", { limit: 5, window: Duration.minutes(1) })
      yield* (yield* AttemptCounter).attempt("a@example.com", { maxAttempts: 3, duration: Duration.minutes(15) })

      const keys = yield* Effect.promise(() => keysMatching(client.redis, client.key("*")))
      expect(keys.map((key) => key.slice(client.key("").length)).sort()).toEqual([
        "blacklist:state-1",
        "lockout:a@example.com",
        "ratelimit:login:203.0.113.9"
      ])
      const ttl = (part: string) => Effect.promise(() => client.redis.pttl(client.key(part)))
      const within = (ms: number, max: number) => {
        expect(ms).toBeGreaterThan(max - 5_000)
        expect(ms).toBeLessThanOrEqual(max)
      }
      within(yield* ttl("blacklist:state-1"), 5 * 60_000)
      within(yield* ttl("ratelimit:login:203.0.113.9"), 60_000)
      within(yield* ttl("lockout:a@example.com"), 15 * 60_000)
    }).pipe(Effect.provide(Layer.provideMerge(adapters, clientLayer())))
  )

  it.live("a lock keeps its key for the lock's length, and clear removes it", () =>
    Effect.gen(function* () {
      const client = yield* RedisClient.RedisClient
      const counter = yield* AttemptCounter
      const rule = { maxAttempts: 2, duration: Duration.minutes(10) }
      yield* counter.attempt("b", rule)
      expect(yield* counter.attempt("b", rule)).toMatchObject({ _tag: "Counted", locking: true })
      expect(yield* Effect.promise(() => client.redis.pttl(client.key("lockout:b")))).toBeGreaterThan(9 * 60_000)
      yield* counter.clear("b")
      expect(yield* Effect.promise(() => client.redis.exists(client.key("lockout:b")))).toBe(0)
    }).pipe(Effect.provide(Layer.provideMerge(adapters, clientLayer())))
  )
})

describe("a Redis that does not answer", () => {
  it.live("fails fast with StoreUnavailableError on every port, without crashing", () =>
    Effect.gen(function* () {
      const port = yield* Effect.promise(freePort)
      const client = RedisClient.layer({ url: Redacted.make(`redis://127.0.0.1:${port}`), prefix: "portcullis-test:" })
      const started = Date.now()
      const results = yield* Effect.gen(function* () {
        const now = yield* DateTime.now
        const tried: Array<Either.Either<unknown, StoreUnavailableError>> = [
          yield* Effect.either((yield* Blacklist).burn("state", DateTime.addDuration(now, "1 minute"))),
          yield* Effect.either((yield* RateLimiter).hit("k", { limit: 1, window: Duration.minutes(1) })),
          yield* Effect.either((yield* AttemptCounter).attempt("a", { maxAttempts: 1, duration: Duration.minutes(1) })),
          yield* Effect.either((yield* AttemptCounter).clear("a"))
        ]
        return tried
      }).pipe(Effect.provide(Layer.provide(adapters, client)))
      for (const result of results) {
        expect(Either.isLeft(result)).toBe(true)
        if (Either.isLeft(result)) expect(result.left).toMatchObject({ _tag: "StoreUnavailableError", store: "redis" })
      }
      expect(Date.now() - started).toBeLessThan(5_000)
    })
  )

  it.live("is not reachable: RedisUnreachableError at once, with the driver's reason and no password", () =>
    Effect.gen(function* () {
      const port = yield* Effect.promise(freePort)
      const started = Date.now()
      const refused = yield* Effect.flip(
        RedisClient.reachable({ url: Redacted.make(`redis://:Re5dis-Pa55@127.0.0.1:${port}`) })
      )
      expect(refused).toEqual(
        new RedisClient.RedisUnreachableError({ reason: `connect ECONNREFUSED 127.0.0.1:${port}` })
      )
      expect(Date.now() - started).toBeLessThan(3_000)
    })
  )
})

describe("a server that takes the connection and never answers", () => {
  it.live("is not reachable either: RedisUnreachableError once the connect and command timeouts have passed", () =>
    Effect.gen(function* () {
      const silent = yield* Effect.acquireRelease(
        Effect.async<Server>((resume) => {
          const server = createServer(() => undefined)
          server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
        }),
        (server) => Effect.sync(() => server.close())
      )
      const { port } = silent.address() as AddressInfo
      const started = Date.now()
      const refused = yield* Effect.flip(
        RedisClient.reachable({
          url: Redacted.make(`redis://127.0.0.1:${port}`),
          connectTimeoutMs: 300,
          commandTimeoutMs: 200
        })
      )
      expect(refused).toEqual(new RedisClient.RedisUnreachableError({ reason: "Command timed out" }))
      expect(Date.now() - started).toBeLessThan(2_000)
    }).pipe(Effect.scoped)
  )
})

describe.skipIf(testRedisUrl === undefined)("a Redis that answers", () => {
  it.live("is reachable", () => RedisClient.reachable({ url: Redacted.make(testRedisUrl ?? "") }))
})
