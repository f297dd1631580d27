import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Layer, Option, Schema } from "effect"
import { PasskeyRepo } from "../../application/ports/PasskeyRepo.js"
import type { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { Passkey, PasskeyCredentialTakenError, SignCount } from "../../domain/Passkey.js"
import { validated } from "../../domain/validated.js"
import { SqlBoolean, SqlInt, SqlMillis } from "./columns.js"
import { boundedCall, isUniqueViolation, unavailable } from "./failures.js"

const Transports = Schema.parseJson(Passkey.fields.transports)

/** A passkeys row: the domain's Passkey with storage encodings. */
const PasskeyRow = Schema.Struct({
  ...Passkey.fields,
  sign_count: Schema.compose(SqlInt, SignCount),
  transports: Transports,
  backed_up: SqlBoolean,
  created_at: SqlMillis,
  last_used_at: Schema.OptionFromNullOr(SqlMillis)
})
const decodePasskeys = Schema.decodeUnknown(Schema.Array(PasskeyRow))
const decodeCredentials = Schema.decodeUnknown(
  Schema.Array(Schema.Struct({ credential_id: Passkey.fields.credential_id, transports: Transports }))
)
const decodeCount = Schema.decodeUnknown(Schema.Tuple(Schema.Struct({ n: SqlInt })))

/** The credential id is the only unique value a new passkey brings (its id is a random UUID). */
const takenOr = (error: SqlError): Effect.Effect<never, PasskeyCredentialTakenError | StoreUnavailableError> =>
  isUniqueViolation(error) ? Effect.fail(new PasskeyCredentialTakenError()) : unavailable(Effect.fail(error))

/**
 * Passkeys in the `passkeys` table. The owner of a found credential is read through the users'
 * repository, which knows how a user is stored. The sign-count swap is one conditional UPDATE:
 * on PostgreSQL (READ COMMITTED) a racing UPDATE of the row waits for the first to commit, then
 * re-checks `sign_count` on the committed row and changes nothing; SQLite's single connection
 * runs them one after the other.
 */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const users = yield* UserRepo
  // Transports reach the row as JSON text on both dialects.
  const transports = sql.onDialectOrElse({
    pg: () => sql`transports::text AS transports`,
    orElse: () => sql`transports`
  })
  const select = sql`SELECT id, user_id, credential_id, public_key, sign_count, ${transports}, backed_up, device_name,
      created_at, last_used_at
    FROM passkeys`
  const oldestFirst = sql`ORDER BY created_at, id`

  return PasskeyRepo.of({
    add: (passkey) =>
      sql`INSERT INTO passkeys (id, user_id, credential_id, public_key, sign_count, transports, backed_up,
          device_name, created_at, last_used_at)
        VALUES (${passkey.id}, ${passkey.user_id}, ${passkey.credential_id}, ${passkey.public_key},
          ${passkey.sign_count}, ${JSON.stringify(passkey.transports)}, ${passkey.backed_up ? 1 : 0},
          ${passkey.device_name}, ${passkey.created_at.epochMillis},
          ${Option.getOrNull(Option.map(passkey.last_used_at, (at) => at.epochMillis))})`.pipe(
        Effect.asVoid,
        Effect.catchTag("SqlError", takenOr),
        boundedCall
      ),

    findByCredentialId: (credentialId) =>
      Effect.gen(function* () {
        const rows = yield* sql`${select} WHERE credential_id = ${credentialId}`.pipe(
          Effect.flatMap(decodePasskeys),
          unavailable
        )
        const row = rows[0]
        if (row === undefined) return Option.none()
        const passkey = new Passkey(row, validated)
        return Option.map(yield* users.findById(passkey.user_id), (user) => ({ passkey, user }))
      }),

    listOf: (userId) =>
      sql`${select} WHERE user_id = ${userId} ${oldestFirst}`.pipe(
        Effect.flatMap(decodePasskeys),
        Effect.map((rows) => rows.map((row) => new Passkey(row, validated))),
        unavailable
      ),

    countOf: (userId) =>
      sql`SELECT COUNT(*) AS n FROM passkeys WHERE user_id = ${userId}`.pipe(
        Effect.flatMap(decodeCount),
        Effect.map(([row]) => row.n),
        unavailable
      ),

    credentialsOf: (userId) =>
      sql`SELECT credential_id, ${transports} FROM passkeys WHERE user_id = ${userId} ${oldestFirst}`.pipe(
        Effect.flatMap(decodeCredentials),
        unavailable
      ),

    deleteOfUser: (userId, id) =>
      sql`DELETE FROM passkeys WHERE id = ${id} AND user_id = ${userId} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        unavailable
      ),

    advanceSignCount: (id, expected, reported, usedAt) =>
      sql`UPDATE passkeys SET sign_count = ${reported}, last_used_at = ${usedAt.epochMillis}
        WHERE id = ${id} AND sign_count = ${expected}
        RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        unavailable
      ),

    touch: (id, usedAt) =>
      sql`UPDATE passkeys SET last_used_at = ${usedAt.epochMillis} WHERE id = ${id}`.pipe(Effect.asVoid, unavailable)
  })
})

export const layer = Layer.effect(PasskeyRepo, make)
