import { Clock, Duration, Effect, Layer, Option } from "effect"
import { ChallengeStore } from "../../application/ports/ChallengeStore.js"
import { sweepEveryMinute } from "./sweep.js"

interface Held {
  readonly challenge: string
  /** Epoch ms from which the challenge is expired. */
  readonly expiresAt: number
}

/**
 * Challenges in a Map with their expiry, read from Effect's Clock, swept every minute so that
 * abandoned ceremonies do not pile up. A take runs without yielding, so it is atomic. Per
 * process: several workers need the Redis adapter.
 */
export const make = Effect.gen(function* () {
  const held = new Map<string, Held>()

  yield* sweepEveryMinute(held, (entry, now) => entry.expiresAt <= now)

  return ChallengeStore.of({
    put: (key, challenge, ttl) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.sync(() => void held.set(key, { challenge, expiresAt: now + Duration.toMillis(ttl) }))
      ),
    take: (key) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.sync(() => {
          const entry = held.get(key)
          held.delete(key)
          return entry !== undefined && entry.expiresAt > now ? Option.some(entry.challenge) : Option.none()
        })
      )
  })
})

export const layer = Layer.scoped(ChallengeStore, make)
