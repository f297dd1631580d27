import { Duration, Effect } from "effect"
import { nextBatchSize, PRUNE_START, type PruneBatch } from "../domain/Retention.js"

/**
 * Work on many rows is done in batches with a pause between them (docs/operating.md, "Data over
 * time"), so that no statement holds the store, and no run of them the event loop, for long.
 */

/**
 * A macrotask's pause between two batches: requests that arrived meanwhile are read and served
 * before the next batch (a fiber's yield alone would not let the event loop poll for them).
 */
export const letRequestsIn = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

/**
 * A background sweep's pause between two batches: as long as the batch took, so that the store
 * is idle half the time. Another process waiting for the write lock meanwhile (a CLI command on
 * the same SQLite file, which polls for it) then finds it free, instead of timing out behind
 * batches that follow each other at once; nobody waits for a sweep. Real time, not Effect's
 * Clock: a test's TestClock must not hold a sweep up.
 */
export const restAsLong = (elapsed: Duration.Duration) =>
  Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, Math.ceil(Duration.toMillis(elapsed)))))

/**
 * Batch after batch until one finds nothing: answers the rows all of them deleted (or cleared).
 * Each batch is given its size, at most `max`, smaller while batches take longer than
 * BATCH_BUDGET_MILLIS (domain/Retention.ts `nextBatchSize`), and the key the last one reached;
 * `pause` runs between batches, given the last one's time.
 */
export const untilNoneFound = <E, R>(
  batch: (size: number, from: number) => Effect.Effect<PruneBatch, E, R>,
  max: number,
  pause: (elapsed: Duration.Duration) => Effect.Effect<void> = () => letRequestsIn
) =>
  Effect.iterate(
    { total: 0, found: -1, size: max, from: PRUNE_START },
    {
      while: (state) => state.found !== 0,
      body: (state) =>
        Effect.map(
          Effect.tap(Effect.timed(batch(state.size, state.from)), ([elapsed]) => pause(elapsed)),
          ([elapsed, { found, done, reached }]) => ({
            total: state.total + done,
            found,
            size: nextBatchSize(state.size, Duration.toMillis(elapsed), max),
            from: reached
          })
        )
    }
  ).pipe(Effect.map((state) => state.total))

/** Batch after batch of rows taken in no particular order, until one finds nothing (untilNoneFound). */
export const untilNoneLeft = <E, R>(
  batch: (size: number) => Effect.Effect<number, E, R>,
  max: number,
  pause?: (elapsed: Duration.Duration) => Effect.Effect<void>
) =>
  untilNoneFound(
    (size) => Effect.map(batch(size), (done): PruneBatch => ({ found: done, done, reached: PRUNE_START })),
    max,
    pause
  )
