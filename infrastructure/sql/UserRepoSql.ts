import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import { DateTime, Effect, Layer, Option, Schema } from "effect"
import type { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { UserAlreadyExistsError } from "../../domain/errors.js"
import { User, UserId } from "../../domain/User.js"
import { validated } from "../../domain/validated.js"
import { randomUserId, type UserRepoOptions } from "../users.js"
import { SqlInt } from "./columns.js"
import { customFieldPath, customFieldValue } from "./customFields.js"
import { boundedCall, isUniqueViolation, transaction, unavailable } from "./failures.js"
import { readStatements, UserRow, userColumns, userOfRows } from "./userRows.js"

const decodeUsers = Schema.decodeUnknown(Schema.Array(UserRow))

/** A boolean parameter: 0/1, which SQLite stores as is and PostgreSQL reads into a BOOLEAN column. */
const flag = (value: boolean) => (value ? 1 : 0)

/** A user write that broke a unique index (email or a unique custom field) is a taken account. */
const takenOr = (error: SqlError): Effect.Effect<never, UserAlreadyExistsError | StoreUnavailableError> =>
  isUniqueViolation(error) ? Effect.fail(new UserAlreadyExistsError()) : unavailable(Effect.fail(error))

const decodeLastValue = Schema.decodeUnknown(Schema.Tuple(Schema.Struct({ last_value: SqlInt })))

export const make = Effect.fnUntraced(function* (options: Pick<UserRepoOptions, "idType"> = {}) {
  const sql = yield* SqlClient.SqlClient
  const idType = options.idType ?? "uuid"
  const select = sql`SELECT ${userColumns(sql)} FROM users u`
  const one = (where: Fragment) =>
    sql`${select} WHERE ${where}`.pipe(
      Effect.flatMap((rows) => userOfRows(rows)),
      unavailable
    )
  const reads = readStatements(sql)
  const byId = (id: UserId) =>
    reads.findById(id).pipe(
      Effect.flatMap((rows) => userOfRows(rows)),
      unavailable
    )
  /** LIKE's wildcards and its escape character, taken literally. */
  const escapeLike = (part: string) => part.replace(/[\\%_]/g, (char) => `\\${char}`)
  const containing = (part: string) => `%${escapeLike(part)}%`
  /** An address starting with `prefix`, as a range of the email index's order (migration 0010). */
  const startingWith = (prefix: string) =>
    sql.onDialectOrElse({
      pg: () => sql`u.email LIKE ${`${escapeLike(prefix)}%`} ESCAPE '\\'`,
      // Binary order: every address starting with the prefix lies between it and it followed by
      // the last code point.
      orElse: () => sql`u.email >= ${prefix} AND u.email < ${`${prefix}\u{10FFFF}`}`
    })
  /** USER_ID_TYPE=integer: the next number of a counter that never goes back (migration 0004). */
  const nextIntegerId = sql`INSERT INTO id_sequences (name, last_value) VALUES ('users', 1)
    ON CONFLICT (name) DO UPDATE SET last_value = id_sequences.last_value + 1 RETURNING last_value`.pipe(
    Effect.flatMap((rows) => Effect.orDie(decodeLastValue(rows))),
    Effect.map(([row]) => UserId.make(String(row.last_value)))
  )
  // The number is drawn and used in one transaction, so a refused insert (email taken) gives it
  // back; concurrent registrations wait for the counter: SQLite's single connection serialises
  // them, PostgreSQL's row lock on the counter holds until the drawing transaction ends.
  const withId = <A, E, R>(insert: (id: UserId) => Effect.Effect<A, E, R>) =>
    idType === "integer" ? transaction(sql)(Effect.flatMap(nextIntegerId, insert)) : insert(randomUserId(idType))
  // With random ids, a taken address is written over with itself instead of refused: the
  // registration then commits one durable write (a sync of the log) as a new account does, so
  // that how long it takes does not tell the address is taken. The answer tells by the id: ours
  // for a new row, another for the address's owner. Integer ids keep the refused insert, which
  // gives the drawn number back.
  const onTakenEmail = idType === "integer" ? sql`` : sql`ON CONFLICT (email) DO UPDATE SET email = users.email`
  /**
   * Refused when a live undo of an address change reserves the address for another account
   * (domain/AddressChange.ts). Read after the write, in its transaction: on PostgreSQL a write that
   * waited for the change freeing the address then sees the reservation the change committed with it.
   */
  const unreserved = (email: string, holder: UserId) =>
    Effect.flatMap(DateTime.now, (now) =>
      sql`SELECT 1 AS reserved FROM email_change_undos
        WHERE old_email = ${email} AND expires_at > ${now.epochMillis} AND user_id <> ${holder} LIMIT 1`.pipe(
        Effect.flatMap((rows) => (rows.length > 0 ? Effect.fail(new UserAlreadyExistsError()) : Effect.void))
      )
    )

  return UserRepo.of({
    create: (fields) =>
      Effect.gen(function* () {
        const now = yield* DateTime.now
        const custom = { ...fields.fields }
        const id = yield* transaction(sql)(
          withId((id) =>
            sql<{
              readonly id: string
            }>`INSERT INTO users (id, email, hashed_password, is_active, is_verified, is_superuser, created_at, fields)
            VALUES (${id}, ${fields.email}, ${Option.getOrNull(fields.hashed_password)}, ${flag(fields.is_active)},
              ${flag(fields.is_verified)}, ${flag(fields.is_superuser)}, ${now.epochMillis}, ${JSON.stringify(custom)})
            ${onTakenEmail} RETURNING id`.pipe(
              // A taken address commits its write over itself (above) and is refused after it.
              Effect.map((rows) => (rows[0]?.id === id ? Option.some(id) : Option.none())),
              Effect.tap(Option.match({ onNone: () => Effect.void, onSome: (id) => unreserved(fields.email, id) }))
            )
          )
        ).pipe(
          Effect.flatMap(
            Option.match({ onNone: () => Effect.fail(new UserAlreadyExistsError()), onSome: Effect.succeed })
          ),
          Effect.catchTag("SqlError", takenOr),
          boundedCall
        )
        return new User({ ...fields, fields: custom, id, created_at: now, roles: [] }, validated)
      }),
    findById: byId,
    findByLogin: (field, value) =>
      field === "email"
        ? one(sql`u.email = ${value}`)
        : one(sql`${sql.literal(customFieldValue(sql, field))} = ${value}`),
    list: ({ emailStartsWith, emailContains, after, limit }) =>
      sql`${select}
        WHERE ${sql.and([
          ...(emailStartsWith === undefined ? [] : [startingWith(emailStartsWith)]),
          ...(emailContains === undefined ? [] : [sql`u.email LIKE ${containing(emailContains)} ESCAPE '\\'`]),
          ...(after === undefined
            ? []
            : // A row value: both dialects seek the (created_at, id) index to it.
              [sql`(u.created_at, u.id) > (${after.created_at.epochMillis}, ${after.id})`])
        ])}
        ORDER BY u.created_at, u.id LIMIT ${limit}`.pipe(
        Effect.flatMap(decodeUsers),
        Effect.map((rows) => rows.map((row) => new User(row, validated))),
        unavailable
      ),
    // One statement: each value replaces the field's (objects are not merged), atomically.
    setFields: (id, fields) => {
      const entries = Object.entries(fields)
      if (entries.length === 0) return byId(id)
      const update = sql.onDialectOrElse({
        // jsonb || object replaces the top-level keys it names, as json_set does.
        pg: () => sql`fields || ${JSON.stringify(Object.fromEntries(entries))}::jsonb`,
        orElse: () =>
          sql`json_set(fields, ${sql.csv(
            entries.map(([field, value]) => sql`${customFieldPath(field)}, json(${JSON.stringify(value)})`)
          )})`
      })
      return sql`UPDATE users SET fields = ${update} WHERE id = ${id}`.pipe(
        Effect.catchTag("SqlError", takenOr),
        boundedCall,
        Effect.zipRight(byId(id))
      )
    },
    setPassword: (id, hashedPassword) =>
      sql`UPDATE users SET hashed_password = ${hashedPassword} WHERE id = ${id}`.pipe(Effect.asVoid, unavailable),
    // The unique index decides a race with a registration of the address: the loser changes nothing.
    setEmail: (id, email) =>
      transaction(sql)(
        sql`UPDATE users SET email = ${email}, is_verified = ${flag(true)} WHERE id = ${id}`.pipe(
          Effect.zipRight(unreserved(email, id))
        )
      ).pipe(Effect.catchTag("SqlError", takenOr), boundedCall, Effect.zipRight(byId(id))),
    clearPassword: (id) =>
      sql`UPDATE users SET hashed_password = NULL WHERE id = ${id}`.pipe(Effect.asVoid, unavailable),
    // On PostgreSQL a racing change waits for this row's lock, then re-checks `expected` on the
    // committed row: of two changes expecting one version, one moves it.
    changeCredentials: (id, expected) =>
      sql`UPDATE users SET credential_version = credential_version + 1
        WHERE id = ${id} ${expected === undefined ? sql`` : sql`AND credential_version = ${expected}`}
        RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        unavailable
      ),
    // FOR SHARE on PostgreSQL: a racing change waits for this transaction to end, and one that
    // got there first makes this read wait, then see its new version (READ COMMITTED re-checks the
    // row). SQLite's transaction already holds the database's one write lock.
    holdCredentials: (id, version) =>
      sql`SELECT 1 AS held FROM users WHERE id = ${id} AND credential_version = ${version}
        ${sql.onDialectOrElse({ pg: () => sql`FOR SHARE`, orElse: () => sql`` })}`.pipe(
        Effect.map((rows) => rows.length > 0),
        unavailable
      ),
    setFlags: (id, flags) =>
      Effect.gen(function* () {
        const changes = Object.entries(flags).flatMap(([column, value]) =>
          value === undefined ? [] : [sql`${sql(column)} = ${flag(value)}`]
        )
        if (changes.length > 0) {
          yield* sql`UPDATE users SET ${sql.csv(changes)} WHERE id = ${id}`.pipe(unavailable)
        }
        return yield* byId(id)
      }),
    delete: (id) => sql`DELETE FROM users WHERE id = ${id}`.pipe(Effect.asVoid, unavailable),
    // Each statement is conditional on the user, so an unknown user leaves no trace, not even
    // its role; a user deleted between the statements at worst leaves a role nobody holds.
    assignRole: (id, role) =>
      Effect.gen(function* () {
        yield* sql`INSERT INTO roles (name) SELECT ${role} WHERE EXISTS (SELECT 1 FROM users WHERE id = ${id})
          ON CONFLICT DO NOTHING`.pipe(unavailable)
        yield* sql`INSERT INTO user_roles (user_id, role) SELECT id, ${role} FROM users WHERE id = ${id}
          ON CONFLICT DO NOTHING`.pipe(unavailable)
        return yield* byId(id)
      }),
    removeRole: (id, role) =>
      sql`DELETE FROM user_roles WHERE user_id = ${id} AND role = ${role}`.pipe(unavailable, Effect.zipRight(byId(id)))
  })
})

/** The repository for a deployment's id type (unique custom fields are the schema's: migrations.ts). */
export const layerWith = (options: Pick<UserRepoOptions, "idType">) => Layer.effect(UserRepo, make(options))

export const layer = layerWith({})
