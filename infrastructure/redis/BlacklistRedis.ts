import { Clock, Effect, Layer } from "effect"
import { Blacklist } from "../../application/ports/Blacklist.js"
import { RedisClient } from "./RedisClient.js"

/**
 * Spent tokens as `blacklist:<jti>` keys that expire when the token would have, set with NX so
 * that of racing uses on any worker exactly one spends it.
 */
export const make = Effect.gen(function* () {
  const client = yield* RedisClient
  return Blacklist.of({
    burn: (jti, until) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        until.epochMillis <= now
          ? Effect.succeed(true)
          : client
              .use("burn", (redis) =>
                redis.set(client.key(`blacklist:${jti}`), "1", "PX", until.epochMillis - now, "NX")
              )
              .pipe(Effect.map((reply) => reply === "OK"))
      )
  })
})

export const layer = Layer.effect(Blacklist, make)
