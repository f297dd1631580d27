import * as SqlClient from "@effect/sql/SqlClient"
import { type DateTime, Effect, Layer, Option, Schema } from "effect"
import { EmailSignInRequests } from "../../application/ports/EmailSignInRequests.js"
import { afterWrongCode, type EmailSignInRequest, WrongCodeCount } from "../../domain/EmailSignIn.js"
import { countOf, SqlInt, SqlMillis } from "./columns.js"
import { unavailable } from "./failures.js"

/** An email_sign_in_requests row: times as epoch milliseconds, the fields as JSON text. */
const RequestRow = Schema.Struct({
  email: Schema.String,
  token_digest: Schema.String,
  code_digest: Schema.String,
  fields: Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  attempts: SqlInt,
  created_at: SqlMillis,
  expires_at: SqlMillis
})
const decodeRequests = Schema.decodeUnknown(Schema.Array(RequestRow))
const decodeAttempts = Schema.decodeUnknown(Schema.Array(Schema.Struct({ attempts: SqlInt })))

/**
 * Pending sign-ins by mail in SQL, SQLite or PostgreSQL alike. A take is one DELETE … RETURNING
 * (of two racing, one gets the row; a wrong code's matches none), a wrong code's count one UPDATE:
 * nothing is read and then written.
 */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const fieldsText = sql.onDialectOrElse({
    pg: () => sql.literal("fields::text AS fields"),
    orElse: () => sql.literal("fields")
  })
  const returning = sql`RETURNING email, token_digest, code_digest, ${fieldsText}, attempts, created_at, expires_at`
  /** The address's request while a code may still take it. */
  const live = (email: string, now: DateTime.Utc, maxAttempts: number) =>
    sql`email = ${email} AND expires_at > ${now.epochMillis} AND attempts < ${maxAttempts}`
  const first = (rows: ReadonlyArray<unknown>) =>
    Effect.map(decodeRequests(rows), (decoded): Option.Option<EmailSignInRequest> => Option.fromNullable(decoded[0]))

  return EmailSignInRequests.of({
    replace: (request) =>
      sql`INSERT INTO email_sign_in_requests (email, token_digest, code_digest, fields, attempts, created_at, expires_at)
        VALUES (${request.email}, ${request.token_digest}, ${request.code_digest}, ${JSON.stringify(request.fields)},
          0, ${request.created_at.epochMillis}, ${request.expires_at.epochMillis})
        ON CONFLICT (email) DO UPDATE SET token_digest = excluded.token_digest, code_digest = excluded.code_digest,
          fields = excluded.fields, attempts = 0, created_at = excluded.created_at, expires_at = excluded.expires_at`.pipe(
        Effect.asVoid,
        unavailable
      ),
    takeByToken: (tokenDigest, now) =>
      sql`DELETE FROM email_sign_in_requests WHERE token_digest = ${tokenDigest} ${returning}`.pipe(
        Effect.flatMap(first),
        // An expired request is taken too: it could never be confirmed again.
        Effect.map(Option.filter((request) => request.expires_at.epochMillis > now.epochMillis)),
        unavailable
      ),
    takeByCode: (email, codeDigest, now, maxAttempts) =>
      sql`DELETE FROM email_sign_in_requests WHERE ${live(email, now, maxAttempts)} AND code_digest = ${codeDigest}
        ${returning}`.pipe(Effect.flatMap(first), unavailable),
    countWrongCode: (email, now, maxAttempts) =>
      Effect.gen(function* () {
        const counted = yield* sql`UPDATE email_sign_in_requests SET attempts = attempts + 1
          WHERE ${live(email, now, maxAttempts)} RETURNING attempts`.pipe(Effect.flatMap(decodeAttempts))
        const attempts = counted[0]?.attempts
        if (attempts === undefined) return WrongCodeCount.NoRequest()
        // The count already refuses every take; this only removes the row. A newer request stored
        // meanwhile starts at zero and stays.
        if (attempts >= maxAttempts) {
          yield* sql`DELETE FROM email_sign_in_requests WHERE email = ${email} AND attempts >= ${maxAttempts}`
        }
        return afterWrongCode(attempts, maxAttempts)
      }).pipe(unavailable),
    countExpired: (before) =>
      sql`SELECT COUNT(*) AS n FROM email_sign_in_requests WHERE expires_at < ${before.epochMillis}`.pipe(
        Effect.flatMap(countOf),
        unavailable
      ),
    deleteExpired: (before, limit) =>
      sql`DELETE FROM email_sign_in_requests WHERE email IN (
          SELECT email FROM email_sign_in_requests WHERE expires_at < ${before.epochMillis} LIMIT ${limit})
        RETURNING email`.pipe(
        Effect.map((rows) => rows.length),
        unavailable
      )
  })
})

export const layer = Layer.effect(EmailSignInRequests, make)
