import { Effect } from "effect"

/**
 * Work on many rows is done in batches with a pause between them (DECISIONS.md, "Data over
 * time"), so that no statement holds the store, and no run of them the event loop, for long.
 */

/**
 * A macrotask's pause between two batches: requests that arrived meanwhile are read and served
 * before the next batch (a fiber's yield alone would not let the event loop poll for them).
 */
export const letRequestsIn = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

/** Batch after batch until one finds nothing: answers the rows of all of them. */
export const untilNoneLeft = <E, R>(batch: Effect.Effect<number, E, R>) =>
  Effect.iterate(
    { total: 0, last: -1 },
    {
      while: (state) => state.last !== 0,
      body: (state) =>
        Effect.map(Effect.zipLeft(batch, letRequestsIn), (done) => ({ total: state.total + done, last: done }))
    }
  ).pipe(Effect.map((state) => state.total))
