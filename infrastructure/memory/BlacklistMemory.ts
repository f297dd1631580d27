import { Clock, Effect, Layer } from "effect"
import { Blacklist } from "../../application/ports/Blacklist.js"
import { sweepEveryMinute } from "./sweep.js"

/**
 * Spent tokens in a Map of jti to expiry (epoch ms), swept every minute so that it never holds
 * more than what is still unexpired. Per process: several workers need the Redis adapter.
 */
export const make = Effect.gen(function* () {
  const until = new Map<string, number>()
  yield* sweepEveryMinute(until, (expiresAt, now) => expiresAt <= now)

  return Blacklist.of({
    burn: (jti, expiresAt) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        if ((until.get(jti) ?? 0) > now) return false
        if (expiresAt.epochMillis > now) until.set(jti, expiresAt.epochMillis)
        return true
      })
  })
})

export const layer = Layer.scoped(Blacklist, make)
