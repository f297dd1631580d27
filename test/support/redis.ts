import { randomBytes } from "node:crypto"
import { Effect, Layer, Redacted } from "effect"
import * as RedisClient from "../../infrastructure/redis/RedisClient.js"

/** The Redis that Redis suites run against; they are skipped when it is unset. */
export const testRedisUrl = process.env.TEST_REDIS_URL

/**
 * A client of TEST_REDIS_URL under a random prefix of its own, so that tests running at once
 * never see each other's keys; the keys are deleted when the layer is released.
 */
export const clientLayer = (url = testRedisUrl ?? "redis://127.0.0.1:6379") =>
  Layer.scoped(
    RedisClient.RedisClient,
    Effect.gen(function* () {
      const prefix = `portcullis-test:${randomBytes(6).toString("hex")}:`
      const client = yield* RedisClient.make({ url: Redacted.make(url), prefix })
      yield* Effect.addFinalizer(() => Effect.promise(() => deleteKeys(client.redis, `${prefix}*`)).pipe(Effect.ignore))
      return client
    })
  )

/** Every key matching `pattern`. */
export const keysMatching = async (redis: RedisClient.RedisClient["Type"]["redis"], pattern: string) => {
  const keys: Array<string> = []
  let cursor = "0"
  do {
    const [next, found] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 200)
    keys.push(...found)
    cursor = next
  } while (cursor !== "0")
  return keys
}

const deleteKeys = async (redis: RedisClient.RedisClient["Type"]["redis"], pattern: string) => {
  const keys = await keysMatching(redis, pattern)
  if (keys.length > 0) await redis.del(...keys)
}
