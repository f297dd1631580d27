import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Option } from "effect"
import { OidcClients } from "../../application/ports/OidcClients.js"
import { type ParkedRequest, ParkedRequests } from "../../application/ports/ParkedRequests.js"
import { databases } from "../support/databases.js"
import { addClient } from "../support/oidcFixtures.js"

const now = DateTime.unsafeMake("2026-12-01T12:00:00Z")

const parked = (digest: string, expiresIn: number): ParkedRequest => ({
  digest,
  request: {
    client_id: "app",
    redirect_uri: "https://app.example.com/cb",
    scopes: ["openid", "email"],
    state: "xyz",
    nonce: null,
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    prompt: ["login"],
    max_age: 0,
    login_hint: null,
    resources: ["https://api.example.com/mcp"]
  },
  parked_at: now,
  expires_at: DateTime.add(now, { seconds: expiresIn })
})

const withClient = addClient("app")

for (const backend of databases) {
  const run = <A, E>(effect: Effect.Effect<A, E, ParkedRequests | OidcClients>) =>
    effect.pipe(Effect.provide(backend.repositories()))

  describe.skipIf(backend.skip)(`ParkedRequests contract (${backend.name})`, () => {
    it.effect("keeps a request as parked until it expires or is removed, once", () =>
      run(
        Effect.gen(function* () {
          const requests = yield* ParkedRequests
          yield* withClient
          yield* requests.park(parked("p1", 900))
          expect(yield* requests.find("p1", now)).toEqual(Option.some(parked("p1", 900)))
          expect(yield* requests.find("p1", DateTime.add(now, { seconds: 900 }))).toEqual(Option.none())
          expect(yield* requests.find("other", now)).toEqual(Option.none())
          expect(yield* requests.remove("p1")).toBe(true)
          expect(yield* requests.remove("p1")).toBe(false)
          expect(yield* requests.find("p1", now)).toEqual(Option.none())
        })
      )
    )

    it.effect("sweeps only expired requests, a batch at a time; a removed client takes its requests", () =>
      run(
        Effect.gen(function* () {
          const requests = yield* ParkedRequests
          yield* withClient
          for (const digest of ["e1", "e2", "e3"]) yield* requests.park(parked(digest, 0))
          yield* requests.park(parked("live", 900))
          const later = DateTime.add(now, { seconds: 1 })
          expect(yield* requests.deleteExpired(later, 2)).toBe(2)
          expect(yield* requests.deleteExpired(later, 2)).toBe(1)
          expect(yield* requests.deleteExpired(later, 2)).toBe(0)
          expect(Option.isSome(yield* requests.find("live", now))).toBe(true)
          yield* (yield* OidcClients).remove("app")
          expect(yield* requests.find("live", now)).toEqual(Option.none())
        })
      )
    )
  })
}
