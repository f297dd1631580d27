import { Duration, Effect } from "effect"
import { nextBatchSize } from "../domain/Retention.js"

/**
 * Work on many rows is done in batches with a pause between them (DECISIONS.md, "Data over
 * time"), so that no statement holds the store, and no run of them the event loop, for long.
 */

/**
 * A macrotask's pause between two batches: requests that arrived meanwhile are read and served
 * before the next batch (a fiber's yield alone would not let the event loop poll for them).
 */
export const letRequestsIn = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

/**
 * Batch after batch until one finds nothing: answers the rows of all of them. Each batch is given
 * its size, at most `max`, smaller while batches take longer than BATCH_BUDGET_MILLIS
 * (domain/Retention.ts `nextBatchSize`).
 */
export const untilNoneLeft = <E, R>(batch: (size: number) => Effect.Effect<number, E, R>, max: number) =>
  Effect.iterate(
    { total: 0, last: -1, size: max },
    {
      while: (state) => state.last !== 0,
      body: (state) =>
        Effect.map(Effect.zipLeft(Effect.timed(batch(state.size)), letRequestsIn), ([elapsed, done]) => ({
          total: state.total + done,
          last: done,
          size: nextBatchSize(state.size, Duration.toMillis(elapsed), max)
        }))
    }
  ).pipe(Effect.map((state) => state.total))
