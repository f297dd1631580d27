import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, Option, Schema } from "effect"
import { AddressChanges } from "../../application/ports/AddressChanges.js"
import { type AddressChangeUndo, linkOf, type PendingAddressChange } from "../../domain/AddressChange.js"
import { UserId } from "../../domain/User.js"
import { countOf, SqlBoolean, SqlInt, SqlMillis } from "./columns.js"
import { unavailable } from "./failures.js"

/** An email_changes row: times as epoch milliseconds. */
const PendingRow = Schema.Struct({
  user_id: UserId,
  new_email: Schema.String,
  family_id: Schema.String,
  credential_version: SqlInt,
  new_token_digest: Schema.String,
  current_token_digest: Schema.NullOr(Schema.String),
  new_confirmed: SqlBoolean,
  current_confirmed: SqlBoolean,
  created_at: SqlMillis,
  expires_at: SqlMillis
})
const UndoRow = Schema.Struct({
  token_digest: Schema.String,
  user_id: UserId,
  old_email: Schema.String,
  new_email: Schema.String,
  changed_at: SqlMillis,
  expires_at: SqlMillis
})
const decodePending = Schema.decodeUnknown(Schema.Array(PendingRow))
const decodeUndos = Schema.decodeUnknown(Schema.Array(UndoRow))
const decodeUsers = Schema.decodeUnknown(Schema.Array(Schema.Struct({ user_id: UserId })))

const firstPending = (rows: ReadonlyArray<unknown>) =>
  Effect.map(decodePending(rows), (decoded): Option.Option<PendingAddressChange> => Option.fromNullable(decoded[0]))

/**
 * Address changes in SQL, SQLite or PostgreSQL alike. A link is counted by one UPDATE … RETURNING,
 * which on PostgreSQL waits for a racing one's commit and answers the row with both; a take and
 * an undo's use are one DELETE each: nothing is read and then written.
 */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const flag = (value: boolean) => sql.onDialectOrElse({ pg: () => value, orElse: () => (value ? 1 : 0) })
  const byEither = (digest: string) => sql`(new_token_digest = ${digest} OR current_token_digest = ${digest})`

  return AddressChanges.of({
    replace: (pending) =>
      sql`INSERT INTO email_changes (user_id, new_email, family_id, credential_version, new_token_digest,
          current_token_digest, new_confirmed, current_confirmed, created_at, expires_at)
        VALUES (${pending.user_id}, ${pending.new_email}, ${pending.family_id}, ${pending.credential_version},
          ${pending.new_token_digest}, ${pending.current_token_digest}, ${flag(pending.new_confirmed)},
          ${flag(pending.current_confirmed)}, ${pending.created_at.epochMillis}, ${pending.expires_at.epochMillis})
        ON CONFLICT (user_id) DO UPDATE SET new_email = excluded.new_email, family_id = excluded.family_id,
          credential_version = excluded.credential_version, new_token_digest = excluded.new_token_digest,
          current_token_digest = excluded.current_token_digest, new_confirmed = excluded.new_confirmed,
          current_confirmed = excluded.current_confirmed, created_at = excluded.created_at,
          expires_at = excluded.expires_at`.pipe(Effect.asVoid, unavailable),
    findByToken: (tokenDigest) =>
      sql`SELECT * FROM email_changes WHERE ${byEither(tokenDigest)}`.pipe(
        Effect.flatMap(firstPending),
        Effect.map(
          Option.flatMap((pending) => {
            const link = linkOf(pending, tokenDigest)
            return link === null ? Option.none() : Option.some({ pending, link })
          })
        ),
        unavailable
      ),
    markUsed: (tokenDigest) =>
      sql`UPDATE email_changes
        SET new_confirmed = CASE WHEN new_token_digest = ${tokenDigest} THEN ${flag(true)} ELSE new_confirmed END,
          current_confirmed = CASE WHEN current_token_digest = ${tokenDigest} THEN ${flag(true)} ELSE current_confirmed END
        WHERE ${byEither(tokenDigest)} RETURNING *`.pipe(Effect.flatMap(firstPending), unavailable),
    take: (userId, newTokenDigest) =>
      sql`DELETE FROM email_changes WHERE user_id = ${userId} AND new_token_digest = ${newTokenDigest}
        RETURNING user_id`.pipe(
        Effect.map((rows) => rows.length > 0),
        unavailable
      ),
    remove: (userId) => sql`DELETE FROM email_changes WHERE user_id = ${userId}`.pipe(Effect.asVoid, unavailable),
    reservedFor: (email, now) =>
      sql`SELECT user_id FROM email_change_undos WHERE old_email = ${email} AND expires_at > ${now.epochMillis}
        LIMIT 1`.pipe(
        Effect.flatMap(decodeUsers),
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => row.user_id)),
        unavailable
      ),
    putUndo: (undo) =>
      sql`INSERT INTO email_change_undos (token_digest, user_id, old_email, new_email, changed_at, expires_at)
        VALUES (${undo.token_digest}, ${undo.user_id}, ${undo.old_email}, ${undo.new_email},
          ${undo.changed_at.epochMillis}, ${undo.expires_at.epochMillis})`.pipe(Effect.asVoid, unavailable),
    findUndo: (tokenDigest) =>
      sql`SELECT * FROM email_change_undos WHERE token_digest = ${tokenDigest}`.pipe(
        Effect.flatMap(decodeUndos),
        Effect.map((rows): Option.Option<AddressChangeUndo> => Option.fromNullable(rows[0])),
        unavailable
      ),
    takeUndos: (userId, tokenDigest) =>
      sql<{ readonly token_digest: string }>`DELETE FROM email_change_undos WHERE user_id = ${userId}
        RETURNING token_digest`.pipe(
        Effect.map((rows) => rows.some((row) => row.token_digest === tokenDigest)),
        unavailable
      ),
    countExpired: (before) =>
      sql`SELECT (SELECT COUNT(*) FROM email_changes WHERE expires_at < ${before.epochMillis})
          + (SELECT COUNT(*) FROM email_change_undos WHERE expires_at < ${before.epochMillis}) AS n`.pipe(
        Effect.flatMap(countOf),
        unavailable
      ),
    deleteExpired: (before, limit) =>
      Effect.gen(function* () {
        const pending = yield* sql`DELETE FROM email_changes WHERE user_id IN (
            SELECT user_id FROM email_changes WHERE expires_at < ${before.epochMillis} LIMIT ${limit})
          RETURNING user_id`
        if (pending.length >= limit) return pending.length
        const undos = yield* sql`DELETE FROM email_change_undos WHERE token_digest IN (
            SELECT token_digest FROM email_change_undos WHERE expires_at < ${before.epochMillis}
            LIMIT ${limit - pending.length})
          RETURNING token_digest`
        return pending.length + undos.length
      }).pipe(unavailable)
  })
})

export const layer = Layer.effect(AddressChanges, make)
