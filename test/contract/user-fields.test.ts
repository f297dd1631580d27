import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Schema } from "effect"
import { type NewUser, UserRepo } from "../../application/ports/UserRepo.js"
import { Email, UserId } from "../../domain/User.js"
import { databases, postgresqlFast, sqliteFileFast } from "../support/databases.js"

const options = { uniqueFields: ["username"] }

const newUser = (address: string, fields: Record<string, unknown>): NewUser => ({
  email: Schema.decodeSync(Email)(address),
  hashed_password: Option.none(),
  is_active: true,
  is_verified: false,
  is_superuser: false,
  fields
})

for (const backend of [...databases, sqliteFileFast, postgresqlFast]) {
  describe.skipIf(backend.skip)(`UserRepo custom fields (${backend.name})`, () => {
    const run = <A, E>(effect: Effect.Effect<A, E, UserRepo>) =>
      effect.pipe(Effect.provide(backend.repositories(options)))

    it.effect("stores fields, finds by a custom login field, and sets fields value by value", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const alice = yield* users.create(newUser("alice@example.com", { username: "alice", prefs: { a: 1 } }))
          expect(alice.fields).toEqual({ username: "alice", prefs: { a: 1 } })
          const found = yield* users.findByLogin("username", "alice")
          expect(Option.map(found, (user) => user.id)).toEqual(Option.some(alice.id))
          expect(Option.isNone(yield* users.findByLogin("username", "bob"))).toBe(true)
          const updated = yield* users.setFields(alice.id, { prefs: { b: 2 }, age: 30 })
          expect(Option.map(updated, (user) => user.fields)).toEqual(
            Option.some({ username: "alice", prefs: { b: 2 }, age: 30 })
          )
          expect(Option.map(yield* users.findById(alice.id), (user) => user.fields)).toEqual(
            Option.map(updated, (user) => user.fields)
          )
          expect(Option.isNone(yield* users.setFields(UserId.make("nobody"), { age: 1 }))).toBe(true)
          const plain = yield* users.create({ ...newUser("plain@example.com", {}), fields: {} })
          expect(plain.fields).toEqual({})
        })
      )
    )

    it.effect("a unique field's value is refused on create and on set when another user holds it", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          yield* users.create(newUser("a@example.com", { username: "taken" }))
          const clash = yield* Effect.flip(users.create(newUser("b@example.com", { username: "taken" })))
          expect(clash._tag).toBe("UserAlreadyExistsError")
          expect(Option.isNone(yield* users.findByLogin("email", "b@example.com"))).toBe(true)
          const other = yield* users.create(newUser("c@example.com", { username: "free" }))
          const refused = yield* Effect.flip(users.setFields(other.id, { username: "taken", age: 3 }))
          expect(refused._tag).toBe("UserAlreadyExistsError")
          expect(Option.map(yield* users.findById(other.id), (user) => user.fields)).toEqual(
            Option.some({ username: "free" })
          )
          // Setting one's own value again is no clash.
          expect(Option.isSome(yield* users.setFields(other.id, { username: "free" }))).toBe(true)
        })
      )
    )
  })
}
