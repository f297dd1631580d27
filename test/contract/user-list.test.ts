import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Schema, TestClock } from "effect"
import { type NewUser, UserRepo } from "../../application/ports/UserRepo.js"
import { Email, RoleName, type User } from "../../domain/User.js"
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

  /** The user listed with `address`, to page after. */
  const userOf = (address: string) =>
    Effect.flatMap(UserRepo, (users) => users.findByLogin("email", email(address))).pipe(Effect.map(Option.getOrThrow))

  describe.skipIf(backend.skip)(`UserRepo list contract (${backend.name})`, () => {
    it.effect("lists users oldest first, a page at a time after the last one shown, without overlap", () =>
      run(
        Effect.gen(function* () {
          expect(yield* emails({ limit: 100 })).toEqual(addresses)
          expect(yield* emails({ limit: 2 })).toEqual(addresses.slice(0, 2))
          expect(yield* emails({ limit: 2, after: yield* userOf("bob@example.org") })).toEqual(addresses.slice(2, 4))
          expect(yield* emails({ limit: 2, after: yield* userOf("100%@example.com") })).toEqual([])
        })
      )
    )

    it.effect("pages by id among users created at the same instant", () =>
      Effect.gen(function* () {
        const users = yield* UserRepo
        const created: Array<User> = []
        for (const address of ["x1@example.com", "x2@example.com", "x3@example.com", "x4@example.com"]) {
          created.push(yield* users.create(newUser(address)))
        }
        const byId = created.map((user) => user.email).sort((a, b) => idOf(created, a).localeCompare(idOf(created, b)))
        const first = yield* users.list({ limit: 2 })
        expect(first.map((user) => user.email)).toEqual(byId.slice(0, 2))
        const second = yield* users.list({ limit: 2, after: first[1] as (typeof first)[number] })
        expect(second.map((user) => user.email)).toEqual(byId.slice(2))
      }).pipe(Effect.provide(backend.repositories()))
    )

    it.effect("filters by the start of the email, taking LIKE's wildcards literally", () =>
      run(
        Effect.gen(function* () {
          expect(yield* emails({ emailStartsWith: "dave", limit: 100 })).toEqual([
            "dave_x@example.com",
            "daveyx@example.com"
          ])
          expect(yield* emails({ emailStartsWith: "dave_", limit: 100 })).toEqual(["dave_x@example.com"])
          expect(yield* emails({ emailStartsWith: "100%", limit: 100 })).toEqual(["100%@example.com"])
          expect(yield* emails({ emailStartsWith: "10_", limit: 100 })).toEqual([])
          expect(yield* emails({ emailStartsWith: "example", limit: 100 })).toEqual([])
          expect(yield* emails({ emailStartsWith: "ada@example.com", limit: 100 })).toEqual(["ada@example.com"])
          expect(
            yield* emails({ emailStartsWith: "dave", limit: 1, after: yield* userOf("dave_x@example.com") })
          ).toEqual(["daveyx@example.com"])
        })
      )
    )

    it.effect("filters by a part of the email, taking LIKE's wildcards literally", () =>
      run(
        Effect.gen(function* () {
          expect(yield* emails({ emailContains: "example.com", limit: 100 })).toEqual(
            addresses.filter((address) => address.endsWith("example.com"))
          )
          expect(yield* emails({ emailContains: "e_x", limit: 100 })).toEqual(["dave_x@example.com"])
          expect(yield* emails({ emailContains: "0%", limit: 100 })).toEqual(["100%@example.com"])
          expect(yield* emails({ emailContains: "ar", limit: 100 })).toEqual(["carol@example.com"])
          expect(yield* emails({ emailContains: "nobody", limit: 100 })).toEqual([])
          expect(
            yield* emails({ emailContains: "example.com", limit: 1, after: yield* userOf("ada@example.com") })
          ).toEqual(["carol@example.com"])
        })
      )
    )

    it.effect("answers each user whole: flags and roles", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const [first] = yield* users.list({ emailContains: "ada@", limit: 1 })
          if (first === undefined) throw new Error("expected ada")
          yield* users.setFlags(first.id, { is_superuser: true })
          yield* users.assignRole(first.id, Schema.decodeSync(RoleName)("auditor"))
          const [listed] = yield* users.list({ emailContains: "ada@", limit: 1 })
          expect(listed).toMatchObject({ id: first.id, is_superuser: true, is_active: true, roles: ["auditor"] })
          expect(listed?.created_at).toEqual(first.created_at)
        })
      )
    )
  })
}

const idOf = (users: ReadonlyArray<{ readonly id: unknown; readonly email: string }>, address: string) =>
  String(users.find((user) => user.email === address)?.id)
