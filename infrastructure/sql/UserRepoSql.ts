import * as SqlClient from "@effect/sql/SqlClient"
import type { Fragment } from "@effect/sql/Statement"
import { DateTime, Effect, Layer, Option, Schema } from "effect"
import type { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { UserAlreadyExistsError } from "../../domain/errors.js"
import { User, UserId, type UserIdType } from "../../domain/User.js"
import { randomUserId, UserIdTypeSetting } from "../userIds.js"
import { isUniqueViolation, unavailable } from "./failures.js"

/** SQLite answers booleans as 0/1, PostgreSQL as booleans. */
const SqlBoolean = Schema.Union(
  Schema.Boolean,
  Schema.transform(Schema.Number, Schema.Boolean, { decode: (n) => n !== 0, encode: (b) => (b ? 1 : 0) })
)

/** A users row joined with its roles: the domain's User with storage encodings. */
const UserRow = Schema.Struct({
  ...User.fields,
  is_active: SqlBoolean,
  is_verified: SqlBoolean,
  is_superuser: SqlBoolean,
  created_at: Schema.DateTimeUtcFromNumber,
  roles: Schema.parseJson(Schema.Array(Schema.String))
})
const decodeUsers = Schema.decodeUnknown(Schema.Array(UserRow))
const toUser = (rows: ReadonlyArray<typeof UserRow.Type>) =>
  Option.map(Option.fromNullable(rows[0]), (row) => new User(row))

const flag = (value: boolean) => (value ? 1 : 0)

const decodeLastValue = Schema.decodeUnknown(Schema.Tuple(Schema.Struct({ last_value: Schema.Int })))

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const idType = yield* UserIdTypeSetting
  const select = sql`SELECT u.id, u.email, u.hashed_password, u.is_active, u.is_verified, u.is_superuser, u.created_at,
      (SELECT json_group_array(r.role) FROM user_roles r WHERE r.user_id = u.id) AS roles
    FROM users u`
  const one = (where: Fragment) =>
    sql`${select} WHERE ${where}`.pipe(Effect.flatMap(decodeUsers), Effect.map(toUser), unavailable)
  const byId = (id: UserId) => one(sql`u.id = ${id}`)
  /** USER_ID_TYPE=integer: the next number of a counter that never goes back (migration 0004). */
  const nextIntegerId = sql`INSERT INTO id_sequences (name, last_value) VALUES ('users', 1)
    ON CONFLICT (name) DO UPDATE SET last_value = last_value + 1 RETURNING last_value`.pipe(
    Effect.flatMap((rows) => Effect.orDie(decodeLastValue(rows))),
    Effect.map(([row]) => UserId.make(String(row.last_value)))
  )
  // The number is drawn and used in one transaction, so a refused insert (email taken) gives it
  // back; the single connection serialises concurrent registrations.
  const withId = <A, E, R>(insert: (id: UserId) => Effect.Effect<A, E, R>) =>
    idType === "integer" ? sql.withTransaction(Effect.flatMap(nextIntegerId, insert)) : insert(randomUserId(idType))

  return UserRepo.of({
    create: (fields) =>
      Effect.gen(function* () {
        const now = yield* DateTime.now
        const id = yield* withId((id) =>
          sql`INSERT INTO users (id, email, hashed_password, is_active, is_verified, is_superuser, created_at)
          VALUES (${id}, ${fields.email}, ${Option.getOrNull(fields.hashed_password)}, ${flag(fields.is_active)},
            ${flag(fields.is_verified)}, ${flag(fields.is_superuser)}, ${now.epochMillis})`.pipe(Effect.as(id))
        ).pipe(
          Effect.catchTag(
            "SqlError",
            (error): Effect.Effect<never, UserAlreadyExistsError | StoreUnavailableError> =>
              isUniqueViolation(error) ? Effect.fail(new UserAlreadyExistsError()) : unavailable(Effect.fail(error))
          )
        )
        return new User({ ...fields, id, created_at: now, roles: [] })
      }),
    findById: byId,
    findByLogin: (field, value) => (field === "email" ? one(sql`u.email = ${value}`) : Effect.succeed(Option.none())),
    setPassword: (id, hashedPassword) =>
      sql`UPDATE users SET hashed_password = ${hashedPassword} WHERE id = ${id}`.pipe(Effect.asVoid, unavailable),
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

/** The repository for a deployment's USER_ID_TYPE. */
export const layerFor = (idType: UserIdType) =>
  Layer.effect(UserRepo, make).pipe(Layer.provide(Layer.succeed(UserIdTypeSetting, idType)))

export const layer = layerFor("uuid")
