import { createHash } from "node:crypto"
import { Context, Effect, Layer, Redacted, Runtime } from "effect"
import { Redis } from "ioredis"
import { storeUnavailable } from "../../application/metrics.js"
import type { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"

/** The key prefix of everything Portcullis keeps in Redis. */
export const DEFAULT_PREFIX = "portcullis:"

export interface RedisClientOptions {
  readonly url: Redacted.Redacted<string>
  /** Put before every key, so that Portcullis can share a Redis with others. */
  readonly prefix?: string
  /** How long connecting may take before it counts as a failure (ms). */
  readonly connectTimeoutMs?: number
  /** How long a command may wait for its answer before it fails (ms). */
  readonly commandTimeoutMs?: number
}

/** One Lua script, run by its SHA1 and sent whole only when Redis does not know it yet. */
export type Script = (
  redis: Redis,
  keys: ReadonlyArray<string>,
  args: ReadonlyArray<string | number>
) => Promise<unknown>

export const script = (lua: string): Script => {
  const sha = createHash("sha1").update(lua).digest("hex")
  return async (redis, keys, args) => {
    try {
      return await redis.evalsha(sha, keys.length, ...keys, ...args)
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error
      return await redis.eval(lua, keys.length, ...keys, ...args)
    }
  }
}

/**
 * The one Redis connection the Redis adapters share. Commands fail fast while Redis is away
 * (no offline queue, short connect and command timeouts, one retry), with StoreUnavailableError
 * ({ store: "redis" }); the connection is re-established in the background, so requests succeed
 * again by themselves once Redis answers. Going down and coming back are each logged once, with
 * the driver's message and never the URL.
 */
export class RedisClient extends Context.Tag("infrastructure/RedisClient")<
  RedisClient,
  {
    readonly redis: Redis
    /** `part` under the client's prefix. */
    readonly key: (part: string) => string
    /** Runs one round trip; any failure of it is a StoreUnavailableError. */
    readonly use: <A>(operation: string, f: (redis: Redis) => Promise<A>) => Effect.Effect<A, StoreUnavailableError>
  }
>() {}

export const make = (options: RedisClientOptions) =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<never>()
    const log = (effect: Effect.Effect<void>) => void Runtime.runFork(runtime)(effect)
    const prefix = options.prefix ?? DEFAULT_PREFIX

    const redis = yield* Effect.acquireRelease(
      Effect.sync(
        () =>
          new Redis(Redacted.value(options.url), {
            connectTimeout: options.connectTimeoutMs ?? 2_000,
            commandTimeout: options.commandTimeoutMs ?? 1_000,
            maxRetriesPerRequest: 1,
            enableOfflineQueue: false,
            // Reconnect for ever, at most every two seconds.
            retryStrategy: (times) => Math.min(times * 100, 2_000)
          })
      ),
      (redis) => Effect.promise(() => redis.quit().then(String, () => redis.disconnect()))
    )

    let available = true
    redis.on("error", (error: unknown) => {
      if (!available) return
      available = false
      const message = error instanceof Error ? error.message : String(error)
      log(
        Effect.logWarning(
          "redis unavailable: single-use tokens (verify, reset) fail closed, rate limits and lockout fail open",
          message
        )
      )
    })
    redis.on("ready", () => {
      if (available) return
      available = true
      log(Effect.logInfo("redis available again"))
    })

    // Wait for the first connection, or its first failure: a Redis down at start-up is not a
    // reason not to start, since the connection keeps being retried.
    yield* Effect.async<void>((resume) => {
      const done = () => {
        redis.off("ready", done)
        redis.off("error", done)
        resume(Effect.void)
      }
      redis.once("ready", done)
      redis.once("error", done)
    })

    return RedisClient.of({
      redis,
      key: (part) => prefix + part,
      use: (operation, f) =>
        Effect.tryPromise({ try: () => f(redis), catch: (error) => error }).pipe(
          Effect.tapError((error) =>
            Effect.logDebug(`redis ${operation} failed`, error instanceof Error ? error.message : String(error))
          ),
          Effect.catchAll(() => storeUnavailable("redis"))
        )
    })
  })

export const layer = (options: RedisClientOptions) => Layer.scoped(RedisClient, make(options))
