import { Effect, Layer, Option } from "effect"
import { type NewOutboxMessage, Outbox, type OutboxMessage } from "../../application/ports/Outbox.js"
import { keyedTake } from "./keyedBatch.js"

/** A message as kept, with the state of its delivery. */
interface Row extends NewOutboxMessage {
  readonly seq: number
  attempts: number
  next_attempt_at: number
  claim: string | null
  claimed_until: number | null
  delivered_at: number | null
  dead_at: number | null
  last_error: string | null
}

/**
 * The outbox in an array in the order written, for tests and throwaway runs: one process, so a
 * claim is atomic because nothing yields while it runs.
 */
export const make = Effect.sync(() => {
  let rows: Array<Row> = []
  let nextSeq = 1

  const isPending = (row: Row) => row.delivered_at === null && row.dead_at === null
  const held = (seq: number, claim: string) =>
    Option.fromNullable(rows.find((row) => row.seq === seq && row.claim === claim && isPending(row)))

  return Outbox.of({
    add: (messages) =>
      Effect.sync(() => {
        for (const message of messages) {
          rows.push({
            ...message,
            seq: nextSeq++,
            attempts: 0,
            next_attempt_at: message.created_at.epochMillis,
            claim: null,
            claimed_until: null,
            delivered_at: null,
            dead_at: null,
            last_error: null
          })
        }
      }),
    claim: (now, leaseUntil, limit, claim) =>
      Effect.sync(() => {
        const at = now.epochMillis
        const blocked = new Set<string>()
        const claimed: Array<OutboxMessage> = []
        for (const row of rows) {
          if (!isPending(row)) continue
          const queue = row.user_id === null ? null : `${row.endpoint}\u0000${row.user_id}`
          if (queue !== null && blocked.has(queue)) continue
          if (queue !== null) blocked.add(queue)
          const due = row.next_attempt_at <= at && (row.claimed_until === null || row.claimed_until < at)
          if (!due || claimed.length >= limit) continue
          row.claim = claim
          row.claimed_until = leaseUntil.epochMillis
          const { seq, attempts, id, endpoint, user_id, type, body, created_at } = row
          claimed.push({ seq, attempts: attempts + 1, id, endpoint, user_id, type, body, created_at })
        }
        return claimed
      }),
    delivered: (seq, claim, now) =>
      Effect.sync(() =>
        Option.match(held(seq, claim), {
          onNone: () => false,
          onSome: (row) => {
            row.delivered_at = now.epochMillis
            row.claimed_until = null
            row.attempts++
            return true
          }
        })
      ),
    failed: (seq, claim, next, error, now) =>
      Effect.sync(() =>
        Option.match(held(seq, claim), {
          onNone: () => false,
          onSome: (row) => {
            row.last_error = error
            row.claimed_until = null
            row.attempts++
            if (next._tag === "Dead") row.dead_at = now.epochMillis
            else row.next_attempt_at = next.at.epochMillis
            return true
          }
        })
      ),
    resend: (which, now) =>
      Effect.sync(() => {
        let count = 0
        for (const row of rows) {
          if (row.dead_at === null || (which !== "dead" && row.id !== which.id)) continue
          row.dead_at = null
          row.attempts = 0
          row.next_attempt_at = now.epochMillis
          count++
        }
        return count
      }),
    backlog: Effect.sync(() => {
      const pending = rows.filter(isPending)
      return {
        pending: pending.length,
        oldest: Option.map(Option.fromNullable(pending[0]), (row) => row.created_at),
        dead: rows.filter((row) => row.dead_at !== null).length
      }
    }),
    countSettledBefore: (before) =>
      Effect.sync(
        () =>
          rows.filter((row) => {
            const settled = row.delivered_at ?? row.dead_at
            return settled !== null && settled < before.epochMillis
          }).length
      ),
    prune: (step, before, limit, from) =>
      Effect.sync(() => {
        const candidates = rows.flatMap((row) => {
          const key = step === "delivered" ? row.delivered_at : row.dead_at
          return key !== null && key < before.epochMillis ? [[row, key] as const] : []
        })
        const { taken, batch } = keyedTake(candidates, from, limit)
        const gone = new Set(taken)
        rows = rows.filter((row) => !gone.has(row))
        return batch
      })
  })
})

export const layer = Layer.effect(Outbox, make)
