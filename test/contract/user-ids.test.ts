import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Option, Schema } from "effect"
import { type NewUser, UserRepo } from "../../application/ports/UserRepo.js"
import { memoryRepositories } from "../../composition/stores.js"
import { UserAlreadyExistsError } from "../../domain/errors.js"
import { Email, type UserIdType } from "../../domain/User.js"
import * as Migrations from "../../infrastructure/sql/migrations.js"
import * as SqliteDatabase from "../../infrastructure/sql/SqliteDatabase.js"
import { loader } from "../../infrastructure/sql/schemaMigrations.js"
import * as UserRepoSql from "../../infrastructure/sql/UserRepoSql.js"
import { randomUserId } from "../../infrastructure/users.js"
import * as Postgres from "../support/postgres.js"

const quiet = Logger.minimumLogLevel(LogLevel.Warning)
const email = Schema.decodeSync(Email)
let counter = 0
const newUser = (): NewUser => ({
  email: email(`ids-${++counter}@example.com`),
  hashed_password: Option.none(),
  is_active: true,
  is_verified: false,
  is_superuser: false
})

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const STRING_ID = /^[A-Za-z0-9_-]{22}$/

/** Each call builds a fresh, empty store making ids of the type. */
const stores: ReadonlyArray<{
  readonly name: string
  readonly layer: (type: UserIdType) => Layer.Layer<UserRepo | SqlClient.SqlClient, unknown>
  /** Skipped when the database it needs is not configured. */
  readonly skip?: boolean
}> = [
  {
    name: "memory",
    layer: (type) => memoryRepositories({ idType: type }).pipe(Layer.provide(quiet))
  },
  {
    name: "sqlite",
    layer: (type) =>
      UserRepoSql.layerWith({ idType: type }).pipe(
        Layer.provideMerge(SqliteDatabase.layer(":memory:")),
        Layer.provide(quiet)
      )
  },
  {
    name: "postgresql",
    layer: (type) => UserRepoSql.layerWith({ idType: type }).pipe(Layer.provideMerge(Postgres.layer())),
    skip: Postgres.noPostgres
  }
]

const create = Effect.flatMap(UserRepo, (users) => users.create(newUser()))

for (const store of stores) {
  const run = <A, E>(type: UserIdType, effect: Effect.Effect<A, E, UserRepo | SqlClient.SqlClient>) =>
    Effect.provide(effect, Layer.fresh(store.layer(type)))

  describe.skipIf(store.skip)(`user ids (${store.name})`, () => {
    it.effect("integer ids are 1, 2, 3… in order of creation", () =>
      run(
        "integer",
        Effect.gen(function* () {
          const ids = [(yield* create).id, (yield* create).id, (yield* create).id]
          expect(ids).toEqual(["1", "2", "3"])
          const users = yield* UserRepo
          expect(Option.map(yield* users.findById(ids[1] as never), (user) => user.id)).toEqual(Option.some("2"))
        })
      )
    )

    it.effect("concurrent registrations get distinct integer ids with no gap", () =>
      run(
        "integer",
        Effect.gen(function* () {
          const created = yield* Effect.all(
            Array.from({ length: 40 }, () => create),
            { concurrency: "unbounded" }
          )
          const numbers = created.map((user) => Number(user.id)).sort((a, b) => a - b)
          expect(numbers).toEqual(Array.from({ length: 40 }, (_, i) => i + 1))
        })
      )
    )

    it.effect("a refused registration takes no number, and a deleted user's number is never given again", () =>
      run(
        "integer",
        Effect.gen(function* () {
          const users = yield* UserRepo
          const first = yield* users.create(newUser())
          const taken = yield* Effect.flip(users.create({ ...newUser(), email: first.email }))
          expect(taken).toBeInstanceOf(UserAlreadyExistsError)
          const second = yield* create
          expect(second.id).toBe("2")
          yield* users.delete(second.id)
          expect((yield* create).id).toBe("3")
        })
      )
    )

    it.effect("string ids are 22 URL-safe random characters, never all digits, all distinct", () =>
      run(
        "string",
        Effect.gen(function* () {
          const created = yield* Effect.all(
            Array.from({ length: 30 }, () => create),
            { concurrency: "unbounded" }
          )
          for (const user of created) {
            expect(user.id).toMatch(STRING_ID)
            expect(user.id).not.toMatch(/^[0-9]+$/)
          }
          expect(new Set(created.map((user) => user.id)).size).toBe(30)
        })
      )
    )

    it.effect("uuid stays the default: version 7 UUIDs", () =>
      run(
        "uuid",
        Effect.gen(function* () {
          const created = yield* Effect.all(Array.from({ length: 5 }, () => create))
          for (const user of created) expect(user.id).toMatch(UUID_V7)
          expect(new Set(created.map((user) => user.id)).size).toBe(5)
        })
      )
    )
  })
}

describe("user ids (sqlite migration)", () => {
  it.effect("an existing uuid database switched to integer ids numbers from 1 alongside its UUIDs", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT name, last_value FROM id_sequences`).toEqual([{ name: "users", last_value: 0 }])
      const uuidUser = yield* Effect.provide(create, UserRepoSql.layerWith({ idType: "uuid" }))
      const integerUser = yield* Effect.provide(create, UserRepoSql.layerWith({ idType: "integer" }))
      expect(uuidUser.id).toMatch(UUID_V7)
      expect(integerUser.id).toBe("1")
    }).pipe(Effect.provide(SqliteDatabase.layer(":memory:").pipe(Layer.provide(quiet))))
  )
})

describe("migration 0004 on an existing database", () => {
  it.effect("starts the counter after the integer ids already stored, and at 0 for UUIDs", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* Migrations.migrate(Effect.map(loader, (all) => all.filter(([id]) => id <= 2)))
      yield* sql`INSERT INTO users (id, email, created_at) VALUES
        ('0190f0c2-0000-7000-8000-00000000dead', 'a@example.com', 0), ('9', 'b@example.com', 0),
        ('12', 'c@example.com', 0), ('7x', 'd@example.com', 0)`
      const applied = yield* Migrations.migrate(loader)
      expect(applied.map(([id, name]) => `${id}_${name}`)).toContain("4_user_id_sequence")
      expect(yield* sql`SELECT name, last_value FROM id_sequences`).toEqual([{ name: "users", last_value: 12 }])
      expect((yield* Effect.provide(create, UserRepoSql.layerWith({ idType: "integer" }))).id).toBe("13")
    }).pipe(Effect.provide(SqliteDatabase.client(":memory:")), Effect.provide(quiet))
  )
})

describe("randomUserId", () => {
  it("makes v7 UUIDs and 128-bit base64url strings", () => {
    expect(randomUserId("uuid")).toMatch(UUID_V7)
    const ids = Array.from({ length: 1000 }, () => randomUserId("string"))
    for (const id of ids) expect(id).toMatch(STRING_ID)
    expect(new Set(ids).size).toBe(1000)
  })
})
