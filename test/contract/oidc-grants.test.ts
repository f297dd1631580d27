import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Option } from "effect"
import { AuthorizationCodes } from "../../application/ports/AuthorizationCodes.js"
import type { OidcClients } from "../../application/ports/OidcClients.js"
import { OidcGrants } from "../../application/ports/OidcGrants.js"
import { Transaction } from "../../application/ports/Transaction.js"
import type { UserRepo } from "../../application/ports/UserRepo.js"
import type { StoredCode } from "../../domain/oidc/Code.js"
import type { Grant, GrantToken } from "../../domain/oidc/Grant.js"
import { databases, postgresqlFast, sqliteFileFast } from "../support/databases.js"
import { addClient, addUser } from "../support/oidcFixtures.js"

const now = DateTime.unsafeMake("2026-12-01T12:00:00Z")
const later = (seconds: number) => DateTime.add(now, { seconds })

const setUp = Effect.gen(function* () {
  const ada = yield* addUser("ada@example.com")
  const bob = yield* addUser("bob@example.com")
  yield* addClient("app")
  yield* addClient("tool")
  return { ada, bob }
})

const grant = (grantId: string, userId: string, clientId = "app", overrides: Partial<Grant> = {}): Grant => ({
  grant_id: grantId,
  client_id: clientId,
  user_id: userId,
  scopes: ["openid", "offline_access"],
  resources: ["https://api.example.com/mcp"],
  auth_time: 1_764_590_000,
  amr: ["pwd"],
  created_at: now,
  last_used_at: now,
  expires_at: later(3600),
  revoked_at: null,
  ...overrides
})

const token = (digest: string, grantId: string, expiresIn = 3600): GrantToken => ({
  digest,
  grant_id: grantId,
  issued_at: now,
  expires_at: later(expiresIn),
  rotated_at: null
})

/** A code of `userId` for "app", as the authorization endpoint issues it. */
const code = (digest: string, userId: string): StoredCode => ({
  digest,
  client_id: "app",
  user_id: userId,
  redirect_uri: "http://127.0.0.1:5000/cb",
  code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
  scopes: ["openid", "offline_access"],
  resources: [],
  nonce: null,
  auth_time: 1_764_590_000,
  amr: ["pwd"],
  expires_at: later(60),
  redeemed_at: null,
  family_id: null
})

/** The code, stored as the authorization endpoint stores it. */
const issued = (stored: StoredCode) => Effect.flatMap(AuthorizationCodes, (codes) => codes.add(stored))

/** When the code of `digest` was redeemed, and for which grant. */
const redemptionOf = (digest: string) =>
  Effect.map(
    Effect.flatMap(AuthorizationCodes, (codes) => codes.find(digest)),
    Option.map((found) => ({ redeemed_at: found.redeemed_at, family_id: found.family_id }))
  )

for (const backend of [...databases, sqliteFileFast, postgresqlFast]) {
  const run = <A, E>(
    effect: Effect.Effect<A, E, OidcGrants | AuthorizationCodes | OidcClients | UserRepo | Transaction>
  ) => effect.pipe(Effect.provide(backend.repositories()))

  describe.skipIf(backend.skip)(`OidcGrants contract (${backend.name})`, () => {
    it.effect("starts a grant with its first token; rotates a token once; a revoked grant rotates nothing", () =>
      run(
        Effect.gen(function* () {
          const grants = yield* OidcGrants
          const { ada } = yield* setUp
          yield* grants.start(grant("g1", ada), Option.some(token("t1", "g1")))
          expect(yield* grants.presented("t1")).toEqual(
            Option.some({ grant: grant("g1", ada), token: token("t1", "g1") })
          )
          expect(yield* grants.presented("nothing")).toEqual(Option.none())

          const successor = { ...token("t2", "g1", 7200), issued_at: later(60) }
          expect(yield* grants.rotate("t1", successor, later(60))).toBe(true)
          expect(yield* grants.rotate("t1", { ...successor, digest: "t2b" }, later(61))).toBe(false)
          expect(Option.map(yield* grants.presented("t1"), ({ token }) => token.rotated_at)).toEqual(
            Option.some(later(60))
          )
          expect(yield* grants.find("g1")).toEqual(
            Option.some(grant("g1", ada, "app", { last_used_at: later(60), expires_at: later(7260 - 60) }))
          )

          expect(yield* grants.revoke("g1", later(90))).toBe(true)
          expect(yield* grants.revoke("g1", later(91))).toBe(false)
          expect(yield* grants.rotate("t2", { ...token("t3", "g1"), issued_at: later(95) }, later(95))).toBe(false)
          expect(Option.map(yield* grants.presented("t2"), ({ grant }) => grant.revoked_at)).toEqual(
            Option.some(later(90))
          )
        })
      )
    )

    it.effect("starts a grant from its code once: the start that lost writes nothing, a replay reads the first", () =>
      run(
        Effect.gen(function* () {
          const grants = yield* OidcGrants
          const codes = yield* AuthorizationCodes
          const { ada } = yield* setUp
          yield* issued(code("c1", ada))
          expect(yield* grants.startFromCode("c1", grant("g6", ada), Option.some(token("k6", "g6")))).toBe(true)
          expect(yield* redemptionOf("c1")).toEqual(Option.some({ redeemed_at: now, family_id: "g6" }))
          expect(yield* grants.presented("k6")).toEqual(
            Option.some({ grant: grant("g6", ada), token: token("k6", "g6") })
          )

          const second = grant("g7", ada, "app", { created_at: later(1), last_used_at: later(1) })
          expect(yield* grants.startFromCode("c1", second, Option.some(token("k7", "g7")))).toBe(false)
          expect(yield* grants.find("g7")).toEqual(Option.none())
          expect(yield* grants.presented("k7")).toEqual(Option.none())
          expect(yield* redemptionOf("c1")).toEqual(Option.some({ redeemed_at: now, family_id: "g6" }))
          expect(yield* codes.markReplayed("c1", later(2))).toEqual(Option.some("g6"))

          // A code never issued starts nothing.
          expect(yield* grants.startFromCode("no such code", grant("g8", ada), Option.none())).toBe(false)
          expect(yield* grants.find("g8")).toEqual(Option.none())
        })
      )
    )

    it.effect("two redemptions racing over one code: exactly one grant starts", () =>
      run(
        Effect.gen(function* () {
          const grants = yield* OidcGrants
          const { ada } = yield* setUp
          yield* issued(code("race", ada))
          const wins = yield* Effect.all(
            [
              grants.startFromCode("race", grant("ga", ada), Option.some(token("ka", "ga"))),
              grants.startFromCode("race", grant("gb", ada), Option.some(token("kb", "gb")))
            ],
            { concurrency: "unbounded" }
          )
          expect(wins.filter(Boolean)).toHaveLength(1)
          const started = [yield* grants.find("ga"), yield* grants.find("gb")].filter(Option.isSome)
          expect(started).toHaveLength(1)
          expect(Option.map(yield* redemptionOf("race"), (redeemed) => redeemed.family_id)).toEqual(
            Option.some(wins[0] ? "ga" : "gb")
          )
        })
      )
    )

    it.effect("a redemption whose grant cannot be stored changes nothing: the code stays unredeemed", () =>
      run(
        Effect.gen(function* () {
          const grants = yield* OidcGrants
          const { ada } = yield* setUp
          yield* issued(code("c2", ada))
          yield* grants.start(grant("g9", ada), Option.some(token("held", "g9")))
          const failed = yield* Effect.flip(
            grants.startFromCode("c2", grant("g10", ada), Option.some(token("held", "g10")))
          )
          expect(failed._tag).toBe("StoreUnavailableError")
          expect(yield* redemptionOf("c2")).toEqual(Option.some({ redeemed_at: null, family_id: null }))
          expect(yield* grants.find("g10")).toEqual(Option.none())
          expect(yield* grants.startFromCode("c2", grant("g11", ada), Option.some(token("k11", "g11")))).toBe(true)
        })
      )
    )

    it.effect("inside a transaction, a redemption is part of it (rolled back with it)", () =>
      run(
        Effect.gen(function* () {
          const grants = yield* OidcGrants
          const tx = yield* Transaction
          const { ada } = yield* setUp
          yield* issued(code("c3", ada))
          const rolledBack = yield* Effect.flip(
            tx.transaction(
              Effect.gen(function* () {
                expect(yield* grants.startFromCode("c3", grant("g12", ada), Option.none())).toBe(true)
                expect(Option.isSome(yield* grants.find("g12"))).toBe(true)
                return yield* Effect.fail("undone" as const)
              })
            )
          )
          expect(rolledBack).toBe("undone")
          expect(yield* grants.find("g12")).toEqual(Option.none())
          expect(yield* redemptionOf("c3")).toEqual(Option.some({ redeemed_at: null, family_id: null }))
        })
      )
    )

    it.effect("two rotations racing over one token: exactly one wins", () =>
      run(
        Effect.gen(function* () {
          const grants = yield* OidcGrants
          const { ada } = yield* setUp
          yield* grants.start(grant("g2", ada), Option.some(token("r1", "g2")))
          const wins = yield* Effect.all(
            [grants.rotate("r1", token("r2", "g2"), later(1)), grants.rotate("r1", token("r3", "g2"), later(1))],
            { concurrency: "unbounded" }
          )
          expect(wins.filter(Boolean)).toHaveLength(1)
        })
      )
    )

    it.effect("a rotation whose successor cannot be stored changes nothing: the token stays unrotated", () =>
      run(
        Effect.gen(function* () {
          const grants = yield* OidcGrants
          const { ada } = yield* setUp
          yield* grants.start(grant("g3", ada), Option.some(token("s1", "g3")))
          yield* grants.start(grant("g4", ada), Option.some(token("taken", "g4")))
          const failed = yield* Effect.flip(grants.rotate("s1", token("taken", "g3"), later(5)))
          expect(failed._tag).toBe("StoreUnavailableError")
          expect(yield* grants.presented("s1")).toEqual(
            Option.some({ grant: grant("g3", ada), token: token("s1", "g3") })
          )
          expect(yield* grants.rotate("s1", token("s2", "g3"), later(6))).toBe(true)
        })
      )
    )

    it.effect("inside a transaction, reads see its writes and a rotation is part of it (rolled back with it)", () =>
      run(
        Effect.gen(function* () {
          const grants = yield* OidcGrants
          const tx = yield* Transaction
          const { ada } = yield* setUp
          const rolledBack = yield* Effect.flip(
            tx.transaction(
              Effect.gen(function* () {
                yield* grants.start(grant("g5", ada), Option.some(token("u1", "g5")))
                expect(Option.isSome(yield* grants.presented("u1"))).toBe(true)
                expect(Option.isSome(yield* grants.find("g5"))).toBe(true)
                expect(yield* grants.rotate("u1", token("u2", "g5"), later(1))).toBe(true)
                expect(Option.isSome(yield* grants.presented("u2"))).toBe(true)
                return yield* Effect.fail("undone" as const)
              })
            )
          )
          expect(rolledBack).toBe("undone")
          expect(yield* grants.presented("u1")).toEqual(Option.none())
          expect(yield* grants.presented("u2")).toEqual(Option.none())
          expect(yield* grants.find("g5")).toEqual(Option.none())
        })
      )
    )

    it.effect("ends a user's grants, or those of one client; lists the live ones; sweeps the ended", () =>
      run(
        Effect.gen(function* () {
          const grants = yield* OidcGrants
          const { ada, bob } = yield* setUp
          yield* grants.start(grant("a1", ada, "app", { last_used_at: later(1) }), Option.none())
          yield* grants.start(grant("a2", ada, "tool", { last_used_at: later(2) }), Option.some(token("a2t", "a2")))
          yield* grants.start(grant("a3", ada, "app", { expires_at: now }), Option.none())
          yield* grants.start(grant("b1", bob), Option.none())
          expect((yield* grants.liveOfUser(ada, later(10))).map((live) => live.grant_id)).toEqual(["a2", "a1"])

          expect(yield* grants.revokeOfUser(ada, later(20), "app")).toBe(2)
          expect((yield* grants.liveOfUser(ada, later(30))).map((live) => live.grant_id)).toEqual(["a2"])
          expect(yield* grants.revokeOfUser(ada, later(40))).toBe(1)
          expect(yield* grants.liveOfUser(ada, later(50))).toEqual([])
          expect((yield* grants.liveOfUser(bob, later(50))).map((live) => live.grant_id)).toEqual(["b1"])

          expect(yield* grants.deleteEnded(later(30), 10)).toBe(2)
          expect(yield* grants.deleteEnded(later(100), 1)).toBe(1)
          expect(yield* grants.deleteEnded(later(100), 10)).toBe(0)
          expect(yield* grants.presented("a2t")).toEqual(Option.none())
          expect(Option.isSome(yield* grants.find("b1"))).toBe(true)
        })
      )
    )
  })
}
