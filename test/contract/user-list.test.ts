import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Schema, TestClock } from "effect"
import { type NewUser, UserRepo } from "../../application/ports/UserRepo.js"
import { Email, RoleName } from "../../domain/User.js"
import { databases } from "../support/databases.js"

const email = Schema.decodeSync(Email)

const newUser = (address: string): NewUser => ({
  email: email(address),
  hashed_password: Option.none(),
  is_active: true,
  is_verified: false,
  is_superuser: false
})

/** Users created a second apart, in this order, so that their creation order is unambiguous. */
const addresses = [
  "ada@example.com",
  "bob@example.org",
  "carol@example.com",
  "dave_x@example.com",
  "daveyx@example.com",
  "100%@example.com"
]

for (const backend of databases) {
  const run = <A, E>(effect: Effect.Effect<A, E, UserRepo>) =>
    Effect.gen(function* () {
      const users = yield* UserRepo
      for (const address of addresses) {
        yield* users.create(newUser(address))
        yield* TestClock.adjust("1 second")
      }
      return yield* effect
    }).pipe(Effect.provide(backend.repositories()))

  const emails = (query: Parameters<UserRepo["Type"]["list"]>[0]) =>
    Effect.flatMap(UserRepo, (users) => users.list(query)).pipe(Effect.map((page) => page.map((user) => user.email)))

  describe.skipIf(backend.skip)(`UserRepo list contract (${backend.name})`, () => {
    it.effect("lists users oldest first, a page at a time, without overlap", () =>
      run(
        Effect.gen(function* () {
          expect(yield* emails({ limit: 100, offset: 0 })).toEqual(addresses)
          expect(yield* emails({ limit: 2, offset: 0 })).toEqual(addresses.slice(0, 2))
          expect(yield* emails({ limit: 2, offset: 2 })).toEqual(addresses.slice(2, 4))
          expect(yield* emails({ limit: 2, offset: 6 })).toEqual([])
        })
      )
    )

    it.effect("filters by a part of the email, taking LIKE's wildcards literally", () =>
      run(
        Effect.gen(function* () {
          expect(yield* emails({ emailContains: "example.com", limit: 100, offset: 0 })).toEqual(
            addresses.filter((address) => address.endsWith("example.com"))
          )
          expect(yield* emails({ emailContains: "e_x", limit: 100, offset: 0 })).toEqual(["dave_x@example.com"])
          expect(yield* emails({ emailContains: "0%", limit: 100, offset: 0 })).toEqual(["100%@example.com"])
          expect(yield* emails({ emailContains: "ar", limit: 100, offset: 0 })).toEqual(["carol@example.com"])
          expect(yield* emails({ emailContains: "nobody", limit: 100, offset: 0 })).toEqual([])
          expect(yield* emails({ emailContains: "example.com", limit: 1, offset: 1 })).toEqual(["carol@example.com"])
        })
      )
    )

    it.effect("answers each user whole: flags and roles", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const [first] = yield* users.list({ emailContains: "ada@", limit: 1, offset: 0 })
          if (first === undefined) throw new Error("expected ada")
          yield* users.setFlags(first.id, { is_superuser: true })
          yield* users.assignRole(first.id, Schema.decodeSync(RoleName)("auditor"))
          const [listed] = yield* users.list({ emailContains: "ada@", limit: 1, offset: 0 })
          expect(listed).toMatchObject({ id: first.id, is_superuser: true, is_active: true, roles: ["auditor"] })
          expect(listed?.created_at).toEqual(first.created_at)
        })
      )
    )
  })
}
