import { Clock, Effect, Layer } from "effect"
import { Blacklist } from "../../application/ports/Blacklist.js"
import { sweepEveryMinute } from "./sweep.js"

/**
 * Revocations in a Map of key to expiry (epoch ms), swept every minute so that it never holds
 * more than what is still unexpired. Per process: several workers need the Redis adapter.
 */
export const make = Effect.gen(function* () {
  const until = new Map<string, number>()
  const put = (key: string, expiresAt: number) =>
    Effect.sync(() => {
      if ((until.get(key) ?? 0) < expiresAt) until.set(key, expiresAt)
    })
  const live = (key: string, now: number) => (until.get(key) ?? 0) > now

  yield* sweepEveryMinute(until, (expiresAt, now) => expiresAt <= now)

  return Blacklist.of({
    revokeToken: (jti, expiresAt) => put(`jti:${jti}`, expiresAt.epochMillis),
    revokeFamily: (familyId, expiresAt) => put(`family:${familyId}`, expiresAt.epochMillis),
    isRevoked: (jti, familyId) =>
      Effect.map(
        Clock.currentTimeMillis,
        (now) => live(`jti:${jti}`, now) || (familyId !== null && live(`family:${familyId}`, now))
      )
  })
})

export const layer = Layer.scoped(Blacklist, make)
