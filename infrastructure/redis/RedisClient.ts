import { createHash } from "node:crypto"
import { Context, Data, Effect, Layer, Option, Redacted, Runtime } from "effect"
import { Redis } from "ioredis"
import { storeUnavailable } from "../../application/metrics.js"
import type { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

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

/**
 * REDIS_URL did not answer at start-up: serve stops rather than start with protections it cannot
 * share. `reason` is the driver's.
 */
export class RedisUnreachableError extends Data.TaggedError("RedisUnreachableError")<{ readonly reason: string }> {}

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

const connection = (options: RedisClientOptions, retryStrategy: (times: number) => number | null) =>
  new Redis(Redacted.value(options.url), {
    connectTimeout: options.connectTimeoutMs ?? 2_000,
    commandTimeout: options.commandTimeoutMs ?? 1_000,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy
  })

/** The first connection's outcome: none once ready, else the driver's first error. */
const firstConnection = (redis: Redis) =>
  Effect.async<Option.Option<string>>((resume) => {
    const settle = (outcome: Option.Option<string>) => {
      redis.off("ready", ready)
      redis.off("error", failed)
      resume(Effect.succeed(outcome))
    }
    const ready = () => settle(Option.none())
    const failed = (error: unknown) => settle(Option.some(messageOf(error)))
    redis.once("ready", ready)
    redis.once("error", failed)
  })

/**
 * Whether Redis answers now: one connection, made and closed, or RedisUnreachableError with the
 * driver's reason, within the connect and command timeouts (a server that takes the connection
 * and never answers fails the driver's first command). Serve asks before it starts. The
 * client does not: a Redis gone after the start is what its adapters fail closed or fall back
 * from, and an operator's command does not need Redis to be up.
 */
export const reachable = (options: RedisClientOptions) =>
  Effect.acquireUseRelease(
    // Tried once: whoever restarts a refused start (an orchestrator) tries again.
    Effect.sync(() => connection(options, () => null).on("error", () => undefined)),
    (redis) =>
      Effect.flatMap(
        firstConnection(redis),
        Option.match({
          onNone: () => Effect.void,
          onSome: (reason) => Effect.fail(new RedisUnreachableError({ reason }))
        })
      ),
    (redis) => Effect.sync(() => redis.disconnect())
  )

export const make = (options: RedisClientOptions) =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<never>()
    const log = (effect: Effect.Effect<void>) => void Runtime.runFork(runtime)(effect)
    const prefix = options.prefix ?? DEFAULT_PREFIX

    const redis = yield* Effect.acquireRelease(
      // Reconnect for ever, at most every two seconds.
      Effect.sync(() => connection(options, (times) => Math.min(times * 100, 2_000))),
      (redis) => Effect.promise(() => redis.quit().then(String, () => redis.disconnect()))
    )

    let available = true
    redis.on("error", (error: unknown) => {
      if (!available) return
      available = false
      log(
        Effect.logWarning(
          "redis unavailable: OAuth states and the passkey challenges kept there fail closed, rate limits and lockout count in each process on its own",
          messageOf(error)
        )
      )
    })
    redis.on("ready", () => {
      if (available) return
      available = true
      log(Effect.logInfo("redis available again"))
    })

    // Waits for the first connection, or its first failure: the connection keeps being retried.
    yield* firstConnection(redis)

    return RedisClient.of({
      redis,
      key: (part) => prefix + part,
      use: (operation, f) =>
        Effect.tryPromise({ try: () => f(redis), catch: (error) => error }).pipe(
          Effect.tapError((error) => Effect.logDebug(`redis ${operation} failed`, messageOf(error))),
          Effect.catchAll(() => storeUnavailable("redis"))
        )
    })
  })

export const layer = (options: RedisClientOptions) => Layer.scoped(RedisClient, make(options))
