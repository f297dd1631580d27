import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, Schema } from "effect"
import { AuditLog } from "../../application/ports/AuditLog.js"
import { ActorKind, type AuditEntry, AuditEventType, AuditDetails as Details } from "../../domain/Audit.js"
import { UserId } from "../../domain/User.js"
import { SqlInt, SqlMillis } from "./columns.js"
import { unavailable } from "./failures.js"
import { type KeyedRow, keyedBatch } from "./keyedBatch.js"

const decodeRows = Schema.decodeUnknown(
  Schema.Array(
    Schema.Struct({
      id: SqlInt,
      occurred_at: SqlMillis,
      event_type: AuditEventType,
      user_id: Schema.NullOr(UserId),
      actor_kind: ActorKind,
      actor_id: Schema.NullOr(UserId),
      ip_address: Schema.NullOr(Schema.String),
      user_agent: Schema.NullOr(Schema.String),
      details: Schema.parseJson(Details)
    })
  )
)

const decodeRecords = (rows: unknown) =>
  Effect.map(decodeRows(rows), (decoded) =>
    decoded.map(({ event_type, actor_kind, actor_id, ...row }) => ({
      ...row,
      type: event_type,
      actor: { kind: actor_kind, id: actor_id }
    }))
  )

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const insert = (entry: AuditEntry) =>
    sql`INSERT INTO audit_events
        (occurred_at, event_type, user_id, actor_kind, actor_id, ip_address, user_agent, details)
      VALUES (${entry.occurred_at.epochMillis}, ${entry.type}, ${entry.user_id}, ${entry.actor.kind},
        ${entry.actor.id}, ${entry.ip_address}, ${entry.user_agent}, ${JSON.stringify(entry.details)})`

  // Details reach the row as JSON text on both dialects.
  const details = sql.onDialectOrElse({ pg: () => sql`details::text AS details`, orElse: () => sql`details` })
  const columns = sql`id, occurred_at, event_type, user_id, actor_kind, actor_id, ip_address, user_agent, ${details}`

  return AuditLog.of({
    append: (entry) => insert(entry).pipe(Effect.asVoid, unavailable),

    list: (query) =>
      sql`SELECT ${columns} FROM audit_events
        WHERE ${sql.and([
          ...(query.user_id === undefined ? [] : [sql`user_id = ${query.user_id}`]),
          ...(query.type === undefined ? [] : [sql`event_type = ${query.type}`]),
          ...(query.before === undefined ? [] : [sql`id < ${query.before}`])
        ])}
        ORDER BY id DESC LIMIT ${query.limit}`.pipe(Effect.flatMap(decodeRecords), unavailable),

    // Through the primary key from where the last page ended: each page reads its own rows only.
    listSince: (since, after, limit) =>
      sql`SELECT ${columns} FROM audit_events
        WHERE id > ${after} AND occurred_at >= ${since.epochMillis}
        ORDER BY id LIMIT ${limit}`.pipe(Effect.flatMap(decodeRecords), unavailable),

    // One batch through the time index, from where the last one reached: a backlog never becomes
    // one long statement, and no batch walks again what an earlier one deleted.
    deleteBefore: (cutoff, limit, from) =>
      sql<KeyedRow>`SELECT id AS row_id, occurred_at AS row_key
        FROM audit_events WHERE occurred_at < ${cutoff.epochMillis} AND occurred_at >= ${from}
        ORDER BY occurred_at LIMIT ${limit}`.pipe(
        Effect.flatMap((rows) =>
          keyedBatch(rows, from, (ids) => sql`DELETE FROM audit_events WHERE id IN ${sql.in(ids)} RETURNING id`)
        ),
        unavailable
      ),

    countBefore: (cutoff) =>
      sql<{ readonly count: number | string }>`SELECT COUNT(*) AS count FROM audit_events
        WHERE occurred_at < ${cutoff.epochMillis}`.pipe(
        Effect.map((rows) => Number(rows[0]?.count ?? 0)),
        unavailable
      )
  })
})

export const layer = Layer.effect(AuditLog, make)
