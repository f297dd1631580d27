import { DateTime, Effect, Layer } from "effect"
import { AuditLog } from "../../application/ports/AuditLog.js"
import type { AuditRecord } from "../../domain/Audit.js"
import { keyedTake } from "./keyedBatch.js"

/** The audit log in an array, oldest first, for tests and throwaway runs. */
export const make = Effect.sync(() => {
  let records: Array<AuditRecord> = []
  let lastId = 0
  const append = (entry: Omit<AuditRecord, "id">) =>
    Effect.sync(() => {
      records.push({ id: ++lastId, ...entry })
    })
  return AuditLog.of({
    append,
    list: (query) =>
      Effect.sync(() => {
        const page: Array<AuditRecord> = []
        for (let i = records.length - 1; i >= 0 && page.length < query.limit; i--) {
          const record = records[i] as AuditRecord
          if (query.before !== undefined && record.id >= query.before) continue
          if (query.user_id !== undefined && record.user_id !== query.user_id) continue
          if (query.type !== undefined && record.type !== query.type) continue
          page.push(record)
        }
        return page
      }),
    listSince: (since, after, limit) =>
      Effect.sync(() =>
        records.filter((record) => record.id > after && !DateTime.lessThan(record.occurred_at, since)).slice(0, limit)
      ),
    deleteBefore: (cutoff, limit, from) =>
      Effect.sync(() => {
        const candidates = records
          .filter((record) => DateTime.lessThan(record.occurred_at, cutoff))
          .map((record) => [record, DateTime.toEpochMillis(record.occurred_at)] as const)
        const { taken, batch } = keyedTake(candidates, from, limit)
        const gone = new Set(taken)
        records = records.filter((record) => !gone.has(record))
        return batch
      }),
    countBefore: (cutoff) =>
      Effect.sync(() => records.filter((record) => DateTime.lessThan(record.occurred_at, cutoff)).length)
  })
})

export const layer = Layer.effect(AuditLog, make)
