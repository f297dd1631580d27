import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Option } from "effect"
import { AuthorizationCodes } from "../../application/ports/AuthorizationCodes.js"
import { OidcClients } from "../../application/ports/OidcClients.js"
import { Transaction } from "../../application/ports/Transaction.js"
import type { UserRepo } from "../../application/ports/UserRepo.js"
import type { StoredCode } from "../../domain/oidc/Code.js"
import { databases, postgresqlFast, sqliteFileFast } from "../support/databases.js"
import { addClient, addUser } from "../support/oidcFixtures.js"

const now = DateTime.unsafeMake("2026-12-01T12:00:00Z")

/** A user and a client for the codes to be issued to. */
const issuedTo = Effect.gen(function* () {
  yield* addClient("app", { public: true, secret_digest: null, redirect_uris: ["http://127.0.0.1/cb"] })
  return yield* addUser("ada@example.com")
})

const codeOf = (digest: string, userId: string, overrides: Partial<StoredCode> = {}): StoredCode => ({
  digest,
  client_id: "app",
  user_id: userId,
  redirect_uri: "http://127.0.0.1:5000/cb",
  code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
  scopes: ["openid", "email"],
  resources: ["https://api.example.com/mcp"],
  nonce: "n-0S6_WzA2Mj",
  auth_time: 1_764_590_000,
  amr: ["hwk", "user"],
  expires_at: DateTime.add(now, { seconds: 60 }),
  redeemed_at: null,
  family_id: null,
  ...overrides
})

for (const backend of [...databases, sqliteFileFast, postgresqlFast]) {
  const run = <A, E>(effect: Effect.Effect<A, E, AuthorizationCodes | OidcClients | UserRepo | Transaction>) =>
    effect.pipe(Effect.provide(backend.repositories()))

  describe.skipIf(backend.skip)(`AuthorizationCodes contract (${backend.name})`, () => {
    it.effect("inside a transaction, a read sees its writes; rolled back, they are gone", () =>
      run(
        Effect.gen(function* () {
          const codes = yield* AuthorizationCodes
          const tx = yield* Transaction
          const userId = yield* issuedTo
          yield* codes.add(codeOf("t1", userId))
          const rolledBack = yield* Effect.flip(
            tx.transaction(
              Effect.gen(function* () {
                yield* codes.add(codeOf("t2", userId))
                expect(Option.isSome(yield* codes.find("t2"))).toBe(true)
                return yield* Effect.fail("undone" as const)
              })
            )
          )
          expect(rolledBack).toBe("undone")
          expect(yield* codes.find("t2")).toEqual(Option.none())
          expect(yield* codes.find("t1")).toEqual(Option.some(codeOf("t1", userId)))
        })
      )
    )

    it.effect("keeps a code as issued; a code never redeemed is no replay", () =>
      run(
        Effect.gen(function* () {
          const codes = yield* AuthorizationCodes
          const userId = yield* issuedTo
          const first = codeOf("d1", userId)
          yield* codes.add(first)
          expect(yield* codes.find("d1")).toEqual(Option.some(first))
          expect(yield* codes.find("nothing")).toEqual(Option.none())
          expect(yield* codes.markReplayed("d1", now)).toEqual(Option.none())
          expect(yield* codes.find("d1")).toEqual(Option.some(first))
        })
      )
    )

    it.effect("sweeps only expired codes, at most a batch at a time; a removed client takes its codes", () =>
      run(
        Effect.gen(function* () {
          const codes = yield* AuthorizationCodes
          const userId = yield* issuedTo
          for (const digest of ["e1", "e2", "e3"]) yield* codes.add(codeOf(digest, userId, { expires_at: now }))
          yield* codes.add(codeOf("live", userId))
          const later = DateTime.add(now, { seconds: 1 })
          expect(yield* codes.deleteExpired(later, 2)).toBe(2)
          expect(yield* codes.deleteExpired(later, 2)).toBe(1)
          expect(yield* codes.deleteExpired(later, 2)).toBe(0)
          expect(Option.isSome(yield* codes.find("live"))).toBe(true)
          yield* (yield* OidcClients).remove("app")
          expect(yield* codes.find("live")).toEqual(Option.none())
        })
      )
    )
  })
}
