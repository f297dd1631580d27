import type { PruneBatch } from "../../domain/Retention.js"

/**
 * One batch of a sweep's step in memory, as the SQL stores take it (infrastructure/sql/keyedBatch.ts):
 * of the `candidates` (each with its key, a time in milliseconds), at most `limit` at or after
 * `from`, in the order of their key; `taken` are the ones the caller deletes (or clears).
 */
export const keyedTake = <A>(
  candidates: Iterable<readonly [A, number]>,
  from: number,
  limit: number
): { readonly taken: ReadonlyArray<A>; readonly batch: PruneBatch } => {
  const chosen = [...candidates]
    .filter(([, key]) => key >= from)
    .sort(([, a], [, b]) => a - b)
    .slice(0, limit)
  return {
    taken: chosen.map(([item]) => item),
    batch: { found: chosen.length, done: chosen.length, reached: chosen.at(-1)?.[1] ?? from }
  }
}
