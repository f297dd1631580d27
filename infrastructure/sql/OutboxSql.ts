import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, Option, Schema } from "effect"
import { Outbox, type OutboxPruneStep } from "../../application/ports/Outbox.js"
import { SqlInt, SqlMillis } from "./columns.js"
import { unavailable } from "./failures.js"
import { type KeyedRow, keyedBatch } from "./keyedBatch.js"

const decodeMessages = Schema.decodeUnknown(
  Schema.Array(
    Schema.Struct({
      seq: SqlInt,
      id: Schema.String,
      endpoint: Schema.String,
      user_id: Schema.NullOr(Schema.String),
      type: Schema.String,
      body: Schema.String,
      created_at: SqlMillis,
      attempts: SqlInt
    })
  )
)
const decodeBacklog = Schema.decodeUnknown(
  Schema.Array(Schema.Struct({ pending: SqlInt, oldest: Schema.NullOr(SqlMillis), dead: SqlInt }))
)

const decodeCount = Schema.decodeUnknown(Schema.Array(Schema.Struct({ n: SqlInt })))

/** The time a step of the sweep keys its messages by. */
const keyOf = (step: OutboxPruneStep) => (step === "delivered" ? "delivered_at" : "dead_at")

/**
 * The outbox in SQL, SQLite or PostgreSQL alike. A claim is one UPDATE of the messages its
 * subquery picks: on PostgreSQL the subquery locks them `FOR UPDATE SKIP LOCKED`, so that two
 * workers claiming at once take different messages (and a message another worker's claim just
 * changed is read again, and left); SQLite has one writer at a time.
 */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const skipLocked = sql.onDialectOrElse({ pg: () => sql`FOR UPDATE SKIP LOCKED`, orElse: () => sql`` })
  const pending = sql`delivered_at IS NULL AND dead_at IS NULL`

  return Outbox.of({
    add: (messages) =>
      messages.length === 0
        ? Effect.void
        : sql`INSERT INTO webhook_outbox ${sql.insert(
            messages.map((message) => ({
              id: message.id,
              endpoint: message.endpoint,
              user_id: message.user_id,
              type: message.type,
              body: message.body,
              created_at: message.created_at.epochMillis,
              next_attempt_at: message.created_at.epochMillis
            }))
          )}`.pipe(Effect.asVoid, unavailable),

    claim: (now, leaseUntil, limit, claim) =>
      sql`UPDATE webhook_outbox SET claim = ${claim}, claimed_until = ${leaseUntil.epochMillis}
        WHERE seq IN (
          SELECT o.seq FROM webhook_outbox o
          WHERE o.delivered_at IS NULL AND o.dead_at IS NULL AND o.next_attempt_at <= ${now.epochMillis}
            AND (o.claimed_until IS NULL OR o.claimed_until < ${now.epochMillis})
            AND NOT EXISTS (SELECT 1 FROM webhook_outbox e
              WHERE e.endpoint = o.endpoint AND e.user_id = o.user_id AND e.seq < o.seq
                AND e.delivered_at IS NULL AND e.dead_at IS NULL)
          ORDER BY o.seq LIMIT ${limit} ${skipLocked})
        RETURNING seq, id, endpoint, user_id, type, body, created_at, attempts + 1 AS attempts`.pipe(
        Effect.flatMap(decodeMessages),
        // RETURNING answers in no promised order; the deliverer sends in the order written.
        Effect.map((messages) => [...messages].sort((a, b) => a.seq - b.seq)),
        unavailable
      ),

    delivered: (seq, claim, now) =>
      sql`UPDATE webhook_outbox SET delivered_at = ${now.epochMillis}, claimed_until = NULL, attempts = attempts + 1
        WHERE seq = ${seq} AND claim = ${claim} AND ${pending} RETURNING seq`.pipe(
        Effect.map((rows) => rows.length > 0),
        unavailable
      ),

    failed: (seq, claim, next, error, now) =>
      (next._tag === "Dead"
        ? sql`UPDATE webhook_outbox SET dead_at = ${now.epochMillis}, claimed_until = NULL, last_error = ${error},
              attempts = attempts + 1
            WHERE seq = ${seq} AND claim = ${claim} AND ${pending} RETURNING seq`
        : sql`UPDATE webhook_outbox SET next_attempt_at = ${next.at.epochMillis}, claimed_until = NULL,
              last_error = ${error}, attempts = attempts + 1
            WHERE seq = ${seq} AND claim = ${claim} AND ${pending} RETURNING seq`
      ).pipe(
        Effect.map((rows) => rows.length > 0),
        unavailable
      ),

    resend: (which, now) =>
      sql`UPDATE webhook_outbox SET dead_at = NULL, attempts = 0, next_attempt_at = ${now.epochMillis}
        WHERE dead_at IS NOT NULL ${which === "dead" ? sql`` : sql`AND id = ${which.id}`} RETURNING seq`.pipe(
        Effect.map((rows) => rows.length),
        unavailable
      ),

    backlog: sql`SELECT
        (SELECT COUNT(*) FROM webhook_outbox WHERE ${pending}) AS pending,
        (SELECT MIN(created_at) FROM webhook_outbox WHERE ${pending}) AS oldest,
        (SELECT COUNT(*) FROM webhook_outbox WHERE dead_at IS NOT NULL) AS dead`.pipe(
      Effect.flatMap(decodeBacklog),
      Effect.map(([row]) => ({
        pending: row?.pending ?? 0,
        oldest: Option.fromNullable(row?.oldest),
        dead: row?.dead ?? 0
      })),
      unavailable
    ),

    countSettledBefore: (before) =>
      sql`SELECT
          (SELECT COUNT(*) FROM webhook_outbox WHERE delivered_at < ${before.epochMillis}) +
          (SELECT COUNT(*) FROM webhook_outbox WHERE dead_at < ${before.epochMillis}) AS n`.pipe(
        Effect.flatMap(decodeCount),
        Effect.map(([row]) => row?.n ?? 0),
        unavailable
      ),

    // As the sessions' sweep: the next batch starts where the last one reached.
    prune: (step, before, limit, from) => {
      const key = sql.literal(keyOf(step))
      return sql<KeyedRow>`SELECT seq AS row_id, ${key} AS row_key
        FROM webhook_outbox WHERE ${key} < ${before.epochMillis} AND ${key} >= ${from}
        ORDER BY ${key} LIMIT ${limit}`.pipe(
        Effect.flatMap((rows) =>
          keyedBatch(rows, from, (ids) => sql`DELETE FROM webhook_outbox WHERE seq IN ${sql.in(ids)} RETURNING seq`)
        ),
        unavailable
      )
    }
  })
})

export const layer = Layer.effect(Outbox, make)
