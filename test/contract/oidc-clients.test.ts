import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Option } from "effect"
import { OidcClients, type StoredClient } from "../../application/ports/OidcClients.js"
import { OidcGrants } from "../../application/ports/OidcGrants.js"
import { Transaction } from "../../application/ports/Transaction.js"
import type { UserRepo } from "../../application/ports/UserRepo.js"
import { ClientId } from "../../domain/oidc/Client.js"
import { databases, postgresqlFast, sqliteFileFast } from "../support/databases.js"
import { addUser } from "../support/oidcFixtures.js"

const client = (id: string, overrides: Partial<StoredClient> = {}): StoredClient => ({
  client_id: ClientId.make(id),
  name: `App ${id}`,
  public: false,
  first_party: false,
  self_registered: false,
  redirect_uris: ["https://app.example.com/cb", "http://127.0.0.1/cb"],
  post_logout_redirect_uris: ["https://app.example.com/"],
  scopes: ["reports:read"],
  grants: ["authorization_code"],
  secret_digest: "a".repeat(64),
  created_at: DateTime.unsafeMake(Number(id.replace(/\D/g, "")) * 1_000),
  ...overrides
})

for (const backend of [...databases, sqliteFileFast, postgresqlFast]) {
  const run = <A, E>(effect: Effect.Effect<A, E, OidcClients | OidcGrants | UserRepo | Transaction>) =>
    effect.pipe(Effect.provide(backend.repositories()))

  describe.skipIf(backend.skip)(`OidcClients contract (${backend.name})`, () => {
    it.effect("keeps clients as added (every field), oldest first; one client_id once; removes by id", () =>
      run(
        Effect.gen(function* () {
          const clients = yield* OidcClients
          const machine = client("c2", {
            first_party: true,
            redirect_uris: [],
            post_logout_redirect_uris: [],
            scopes: [],
            grants: ["authorization_code", "client_credentials"]
          })
          const native = client("c1", { public: true, secret_digest: null, self_registered: true })
          expect(yield* clients.add(machine)).toBe(true)
          expect(yield* clients.add(native)).toBe(true)
          expect(yield* clients.add(client("c1"))).toBe(false)
          expect(yield* clients.all).toEqual([native, machine])
          expect(yield* clients.find("c2")).toEqual(Option.some(machine))
          expect(yield* clients.find("nobody")).toEqual(Option.none())
          expect(yield* clients.remove("c2")).toBe(true)
          expect(yield* clients.remove("c2")).toBe(false)
          expect((yield* clients.all).map((row) => row.client_id)).toEqual(["c1"])
        })
      )
    )

    it.effect("inside a transaction, a read sees its writes; rolled back, they are gone", () =>
      run(
        Effect.gen(function* () {
          const clients = yield* OidcClients
          const tx = yield* Transaction
          yield* clients.add(client("c7"))
          const rolledBack = yield* Effect.flip(
            tx.transaction(
              Effect.gen(function* () {
                yield* clients.add(client("c8"))
                expect(Option.isSome(yield* clients.find("c8"))).toBe(true)
                yield* clients.replaceSecret("c7", "b".repeat(64))
                expect(Option.map(yield* clients.find("c7"), (found) => found.secret_digest)).toEqual(
                  Option.some("b".repeat(64))
                )
                return yield* Effect.fail("undone" as const)
              })
            )
          )
          expect(rolledBack).toBe("undone")
          expect(yield* clients.find("c8")).toEqual(Option.none())
          expect(Option.map(yield* clients.find("c7"), (found) => found.secret_digest)).toEqual(
            Option.some("a".repeat(64))
          )
        })
      )
    )

    it.effect("replaces only a confidential client's secret digest", () =>
      run(
        Effect.gen(function* () {
          const clients = yield* OidcClients
          yield* clients.add(client("c3"))
          yield* clients.add(client("c4", { public: true, secret_digest: null }))
          expect(yield* clients.replaceSecret("c3", "b".repeat(64))).toBe(true)
          expect(Option.map(yield* clients.find("c3"), (found) => found.secret_digest)).toEqual(
            Option.some("b".repeat(64))
          )
          expect(yield* clients.replaceSecret("c4", "b".repeat(64))).toBe(false)
          expect(Option.map(yield* clients.find("c4"), (found) => found.secret_digest)).toEqual(Option.some(null))
          expect(yield* clients.replaceSecret("nobody", "b".repeat(64))).toBe(false)
        })
      )
    )

    it.effect(
      "removes self-registered clients idle since a cutoff: added before it, no grant used since; counts them first",
      () =>
        run(
          Effect.gen(function* () {
            const clients = yield* OidcClients
            const grants = yield* OidcGrants
            const day = 86_400_000
            const at = (days: number) => DateTime.unsafeMake(100 * day + days * day)
            const agent = (id: string, created: number) =>
              client(id, { public: true, secret_digest: null, self_registered: true, created_at: at(created) })
            yield* clients.add(agent("idle1", -40))
            yield* clients.add(agent("idle2", -35))
            yield* clients.add(agent("used", -40))
            yield* clients.add(agent("fresh", -2))
            yield* clients.add(client("operator9", { created_at: at(-90) }))
            const user = yield* addUser("idle-owner@example.com")
            yield* grants.start(
              {
                grant_id: "g-used",
                client_id: "used",
                user_id: user,
                scopes: ["openid"],
                resources: [],
                auth_time: 0,
                amr: ["pwd"],
                created_at: at(-40),
                last_used_at: at(-1),
                expires_at: at(29),
                revoked_at: null
              },
              Option.none()
            )
            const since = at(-30)
            expect(yield* clients.countIdle(since)).toBe(2)
            expect(yield* clients.deleteIdle(since, 1)).toBe(1)
            expect(yield* clients.deleteIdle(since, 10)).toBe(1)
            expect(yield* clients.deleteIdle(since, 10)).toBe(0)
            expect((yield* clients.all).map((row) => row.client_id).sort()).toEqual(["fresh", "operator9", "used"])
          })
        )
    )

    it.effect("stores a metadata document's client, and replaces its copy when the document changes", () =>
      run(
        Effect.gen(function* () {
          const clients = yield* OidcClients
          const url = "https://agent.example.com/client.json"
          const document = client(url, {
            public: true,
            self_registered: true,
            secret_digest: null,
            scopes: [],
            post_logout_redirect_uris: [],
            redirect_uris: ["http://127.0.0.1/cb"],
            created_at: DateTime.unsafeMake(5_000),
            metadata_expires_at: DateTime.unsafeMake(10_000)
          })
          yield* clients.putDocumentClient(document)
          expect(yield* clients.find(url)).toEqual(Option.some(document))
          const changed = {
            ...document,
            name: "Renamed",
            redirect_uris: ["http://127.0.0.1/other"],
            created_at: DateTime.unsafeMake(9_000),
            metadata_expires_at: DateTime.unsafeMake(20_000)
          }
          yield* clients.putDocumentClient(changed)
          // Its first sighting stays its creation.
          expect(yield* clients.find(url)).toEqual(Option.some({ ...changed, created_at: document.created_at }))
        })
      )
    )
  })
}
