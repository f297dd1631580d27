import { Effect } from "effect"
import type { PruneBatch } from "../../domain/Retention.js"

/** A row a sweep's batch found: what names it, and its key (a time in milliseconds). */
export interface KeyedRow {
  readonly row_id: string | number
  readonly row_key: number | string
}

/**
 * One batch of a sweep's step (domain/Retention.ts `PruneBatch`): the rows found, in the order of
 * their key and at most a batch of them, changed by `change` (a DELETE or UPDATE … RETURNING of
 * their ids). The next batch starts at the last key found, so that rows sharing it that this
 * batch left are found again, and none before it is walked again.
 */
export const keyedBatch = <E, R>(
  rows: ReadonlyArray<KeyedRow>,
  from: number,
  change: (ids: ReadonlyArray<string | number>) => Effect.Effect<ReadonlyArray<unknown>, E, R>
): Effect.Effect<PruneBatch, E, R> => {
  const last = rows.at(-1)
  return last === undefined
    ? Effect.succeed({ found: 0, done: 0, reached: from })
    : Effect.map(change(rows.map((row) => row.row_id)), (changed) => ({
        found: rows.length,
        done: changed.length,
        reached: Number(last.row_key)
      }))
}
