import { Clock, Duration, Effect, Layer } from "effect"
import { type Attempt, AttemptCounter } from "../../application/ports/AttemptCounter.js"
import { sweepEveryMinute } from "./sweep.js"

interface Entry {
  attempts: number
  /** Epoch ms at which the attempts are forgotten. */
  attemptsUntil: number
  /** Epoch ms at which the lock ends; 0 when never locked. */
  lockedUntil: number
}

/**
 * Attempts and locks per identifier in a Map, swept every minute of the entries whose attempts
 * and lock have both run out. Per process: several workers need the Redis adapter.
 */
export const make = Effect.gen(function* () {
  const entries = new Map<string, Entry>()

  yield* sweepEveryMinute(entries, (entry, now) => entry.attemptsUntil <= now && entry.lockedUntil <= now)

  return AttemptCounter.of({
    attempt: (identifier, rule) =>
      Effect.map(Clock.currentTimeMillis, (now): Attempt => {
        const entry = entries.get(identifier) ?? { attempts: 0, attemptsUntil: 0, lockedUntil: 0 }
        if (entry.lockedUntil > now) return { _tag: "Locked", retryAfter: Duration.millis(entry.lockedUntil - now) }
        entries.set(identifier, entry)
        const durationMs = Duration.toMillis(rule.duration)
        if (entry.attemptsUntil <= now) entry.attempts = 0
        entry.attempts += 1
        entry.attemptsUntil = now + durationMs
        const attempts = entry.attempts
        const locking = attempts >= rule.maxAttempts
        if (locking) {
          entry.lockedUntil = now + durationMs
          entry.attempts = 0
        }
        return { _tag: "Counted", attempts, locking }
      }),
    clear: (identifier) => Effect.sync(() => void entries.delete(identifier))
  })
})

export const layer = Layer.scoped(AttemptCounter, make)
