import { Duration, Effect, Layer, Option } from "effect"
import { ChallengeStore } from "../../application/ports/ChallengeStore.js"
import { RedisClient } from "./RedisClient.js"

/**
 * Challenges as plain keys under the client's prefix, expiring with Redis' own timer (SET PX),
 * taken with GETDEL, which reads and deletes in one atomic command (Redis 6.2 or later).
 */
export const make = Effect.gen(function* () {
  const client = yield* RedisClient
  return ChallengeStore.of({
    put: (key, challenge, ttl) => {
      const ttlMs = Math.floor(Duration.toMillis(ttl))
      // Redis refuses an expiry under 1 ms; such a challenge is expired at once, as in memory.
      return Effect.asVoid(
        client.use(
          "challenge put",
          (redis): Promise<unknown> =>
            ttlMs < 1 ? redis.del(client.key(key)) : redis.set(client.key(key), challenge, "PX", ttlMs)
        )
      )
    },
    take: (key) =>
      Effect.map(
        client.use("challenge take", (redis) => redis.getdel(client.key(key))),
        Option.fromNullable
      )
  })
})

export const layer = Layer.effect(ChallengeStore, make)
