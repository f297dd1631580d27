import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Option } from "effect"
import { OidcClients } from "../../application/ports/OidcClients.js"
import { OidcResources, type StoredResource } from "../../application/ports/OidcResources.js"
import { databases } from "../support/databases.js"
import { clientOf } from "../support/oidcFixtures.js"

const resource = (uri: string, overrides: Partial<StoredResource> = {}): StoredResource => ({
  uri,
  scopes: ["mcp:tools"],
  introspecting_client: null,
  created_at: DateTime.unsafeMake(uri.length * 1_000),
  ...overrides
})

for (const backend of databases) {
  const run = <A, E>(effect: Effect.Effect<A, E, OidcResources | OidcClients>) =>
    effect.pipe(Effect.provide(backend.repositories()))

  describe.skipIf(backend.skip)(`OidcResources contract (${backend.name})`, () => {
    it.effect("keeps resources as added, oldest first; one URI once; removes by URI", () =>
      run(
        Effect.gen(function* () {
          const resources = yield* OidcResources
          yield* Effect.flatMap(OidcClients, (clients) =>
            clients.add({ ...clientOf("gateway"), created_at: DateTime.unsafeMake(0) })
          )
          const api = resource("https://api.example.com/mcp", { introspecting_client: "gateway", scopes: [] })
          const reports = resource("https://r.example")
          expect(yield* resources.add(api)).toBe(true)
          expect(yield* resources.add(reports)).toBe(true)
          expect(yield* resources.add(resource("https://r.example", { scopes: [] }))).toBe(false)
          expect(yield* resources.all).toEqual([reports, api])
          expect(yield* resources.find("https://api.example.com/mcp")).toEqual(Option.some(api))
          expect(yield* resources.find("https://api.example.com/mcp/")).toEqual(Option.none())
          expect(yield* resources.remove("https://r.example")).toBe(true)
          expect(yield* resources.remove("https://r.example")).toBe(false)
          expect((yield* resources.all).map((row) => row.uri)).toEqual(["https://api.example.com/mcp"])
        })
      )
    )

    it.effect("forgets its introspecting client when that client is removed, and keeps the resource", () =>
      run(
        Effect.gen(function* () {
          const resources = yield* OidcResources
          const clients = yield* OidcClients
          yield* clients.add({ ...clientOf("edge"), created_at: DateTime.unsafeMake(0) })
          yield* resources.add(resource("https://edge.example/api", { introspecting_client: "edge" }))
          expect(yield* clients.remove("edge")).toBe(true)
          expect(
            Option.map(yield* resources.find("https://edge.example/api"), (found) => found.introspecting_client)
          ).toEqual(Option.some(null))
        })
      )
    )
  })
}
