import { Clock, Duration, Effect, Schedule } from "effect"

const SWEEP_EVERY = Duration.minutes(1)

/**
 * For as long as the enclosing scope lives, deletes every minute the entries of `map` that
 * `expired` says are over, so that a memory store never holds more than what is still live.
 * Reads Effect's Clock, so the TestClock drives it.
 */
export const sweepEveryMinute = <K, V>(map: Map<K, V>, expired: (value: V, now: number) => boolean) =>
  Clock.currentTimeMillis.pipe(
    Effect.flatMap((now) =>
      Effect.sync(() => {
        for (const [key, value] of map) if (expired(value, now)) map.delete(key)
      })
    ),
    Effect.repeat(Schedule.spaced(SWEEP_EVERY)),
    Effect.forkScoped,
    Effect.asVoid
  )
