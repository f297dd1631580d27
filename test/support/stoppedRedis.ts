import { Effect, Layer, Redacted } from "effect"
import * as RedisClient from "../../infrastructure/redis/RedisClient.js"
import { privateRedis } from "./privateRedis.js"

/**
 * A RedisClient whose Redis answered when it was made and is gone now (killed): Redis lost under
 * a running service. The Redis is a private one, so the shared one is never stopped; whatever it
 * held goes with its folder.
 */
export const stoppedRedisClient = Layer.scoped(
  RedisClient.RedisClient,
  Effect.gen(function* () {
    const redis = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const redis = await privateRedis()
        await redis.start()
        return redis
      }),
      (redis) => Effect.promise(redis.remove)
    )
    const client = yield* RedisClient.make({ url: Redacted.make(redis.url) })
    yield* Effect.promise(redis.kill)
    return client
  })
)
