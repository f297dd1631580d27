import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Option } from "effect"
import { Consents } from "../../application/ports/Consents.js"
import type { OidcClients } from "../../application/ports/OidcClients.js"
import type { UserRepo } from "../../application/ports/UserRepo.js"
import { databases } from "../support/databases.js"
import { addClient, addUser } from "../support/oidcFixtures.js"

const now = DateTime.unsafeMake("2026-12-01T12:00:00Z")

for (const backend of databases) {
  const run = <A, E>(effect: Effect.Effect<A, E, Consents | OidcClients | UserRepo>) =>
    effect.pipe(Effect.provide(backend.repositories()))

  describe.skipIf(backend.skip)(`Consents contract (${backend.name})`, () => {
    it.effect("keeps one consent per user and client, adding scopes; tells a first grant; withdraws", () =>
      run(
        Effect.gen(function* () {
          const consents = yield* Consents
          const ada = yield* addUser("ada@example.com")
          const bob = yield* addUser("bob@example.com")
          yield* addClient("a")
          yield* addClient("b")
          expect(yield* consents.grant(ada, "a", ["openid", "email"], now)).toBe(true)
          expect(yield* consents.grant(ada, "a", ["openid", "profile"], DateTime.add(now, { hours: 1 }))).toBe(false)
          expect(yield* consents.grant(ada, "b", ["openid"], DateTime.add(now, { hours: 2 }))).toBe(true)
          expect(yield* consents.find(ada, "a")).toEqual(
            Option.some({ user_id: ada, client_id: "a", scopes: ["openid", "email", "profile"], granted_at: now })
          )
          expect(yield* consents.find(bob, "a")).toEqual(Option.none())
          expect((yield* consents.ofUser(ada)).map((consent) => consent.client_id)).toEqual(["a", "b"])
          expect(yield* consents.ofUser(bob)).toEqual([])
          expect(yield* consents.withdraw(ada, "a")).toBe(true)
          expect(yield* consents.withdraw(ada, "a")).toBe(false)
          expect((yield* consents.ofUser(ada)).map((consent) => consent.client_id)).toEqual(["b"])
        })
      )
    )

    it.effect("two grants racing for one user and client keep both's scopes, and one of them is the first", () =>
      run(
        Effect.gen(function* () {
          const consents = yield* Consents
          const ada = yield* addUser("race@example.com")
          yield* addClient("r")
          const firsts = yield* Effect.all(
            [consents.grant(ada, "r", ["openid", "email"], now), consents.grant(ada, "r", ["profile"], now)],
            { concurrency: "unbounded" }
          )
          expect(firsts.filter(Boolean)).toHaveLength(1)
          const scopes = Option.map(yield* consents.find(ada, "r"), (consent) => [...consent.scopes].sort())
          expect(scopes).toEqual(Option.some(["email", "openid", "profile"]))
        })
      )
    )
  })
}
