import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Option, Schema, TestClock } from "effect"
import { RefreshTokenRepo } from "../../application/ports/RefreshTokenRepo.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { FamilyId, listTop, type SessionPosition, StoredRefreshToken, TokenFamily } from "../../domain/Session.js"
import { Email, type User, UserId } from "../../domain/User.js"
import { databases, postgresqlFast, sqliteFileFast } from "../support/databases.js"

/**
 * The RefreshTokenRepo contract for the sessions routes (listing a user's live families, ending
 * one of them only for its owner), run unchanged against every adapter.
 */

/** An instant with a millisecond part, so that a store rounding to seconds would show. */
const START = Date.UTC(2033, 2, 3, 4, 5, 6, 789)
const DAY = 86_400_000

const encodeFamily = Schema.encodeSync(TokenFamily)
const email = Schema.decodeSync(Email)
const at = (offsetMillis: number) => DateTime.unsafeMake(START + offsetMillis)

const family = (owner: User, id: string, createdAt: DateTime.Utc, overrides: Partial<TokenFamily> = {}) =>
  new TokenFamily({
    family_id: FamilyId.make(id),
    user_id: owner.id,
    ip_address: `198.51.100.${id.length}`,
    user_agent: `Agent for ${id}`,
    created_at: createdAt,
    last_used_at: createdAt,
    expires_at: DateTime.addDuration(createdAt, "30 days"),
    revoked_at: Option.none(),
    ...overrides
  })

const firstToken = (of: TokenFamily) =>
  new StoredRefreshToken({
    digest: `digest-${of.family_id}`,
    family_id: of.family_id,
    issued_at: of.created_at,
    expires_at: of.expires_at,
    rotated_at: Option.none(),
    sealed_successor: Option.none()
  })

const createUser = (address: string) =>
  Effect.flatMap(UserRepo, (users) =>
    users.create({
      email: email(address),
      hashed_password: Option.none(),
      is_active: true,
      is_verified: false,
      is_superuser: false
    })
  )

const start = (of: TokenFamily) => Effect.flatMap(RefreshTokenRepo, (tokens) => tokens.startFamily(of, firstToken(of)))

/** The live families of a user, encoded and sorted by id so that adapters compare field by field. */
const liveOf = (owner: UserId, now: DateTime.Utc) =>
  Effect.flatMap(RefreshTokenRepo, (tokens) =>
    tokens.liveFamiliesOf(owner, now, { limit: 500, after: Option.none(), except: Option.none() })
  ).pipe(
    Effect.map((families) =>
      families.map((one) => encodeFamily(one)).sort((a, b) => a.family_id.localeCompare(b.family_id))
    )
  )

const revokedAt = (familyId: string) =>
  Effect.flatMap(RefreshTokenRepo, (tokens) => tokens.findByDigest(`digest-${familyId}`)).pipe(
    Effect.map((found) => Option.getOrThrow(found).family.revoked_at)
  )

// The rotation of a SQLite file's own adapter (infrastructure/sql/fast/) is held here too.
for (const backend of [...databases, sqliteFileFast, postgresqlFast]) {
  const run = <A, E>(effect: Effect.Effect<A, E, UserRepo | RefreshTokenRepo>) =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      return yield* effect
    }).pipe(Effect.provide(backend.repositories()))

  describe.skipIf(backend.skip)(`RefreshTokenRepo sessions contract (${backend.name})`, () => {
    it.effect("liveFamiliesOf answers every live family of the user, every field to the millisecond", () =>
      run(
        Effect.gen(function* () {
          const alice = yield* createUser("alice@example.com")
          const phone = family(alice, "phone", at(1), { expires_at: at(30 * DAY + 7) })
          const laptop = family(alice, "laptop", at(2), { ip_address: null, user_agent: null })
          yield* start(phone)
          yield* start(laptop)
          expect(yield* liveOf(alice.id, at(10))).toEqual([encodeFamily(laptop), encodeFamily(phone)])
        })
      )
    )

    it.effect("liveFamiliesOf leaves out ended and expired families, and other users'", () =>
      run(
        Effect.gen(function* () {
          const tokens = yield* RefreshTokenRepo
          const alice = yield* createUser("alice@example.com")
          const bob = yield* createUser("bob@example.com")
          yield* start(family(alice, "live", at(0)))
          yield* start(family(alice, "ended", at(0)))
          yield* start(family(alice, "expiring", at(0), { expires_at: at(DAY) }))
          yield* start(family(bob, "bobs", at(0)))
          yield* tokens.revokeFamily(FamilyId.make("ended"), at(1_000))

          const ids = (owner: UserId, now: DateTime.Utc) =>
            Effect.map(liveOf(owner, now), (rows) => rows.map((row) => row.family_id))
          expect(yield* ids(alice.id, at(2_000))).toEqual(["expiring", "live"])
          // A family whose expiry is now is over, as its refresh token is.
          expect(yield* ids(alice.id, at(DAY - 1))).toEqual(["expiring", "live"])
          expect(yield* ids(alice.id, at(DAY))).toEqual(["live"])
          expect(yield* ids(bob.id, at(2_000))).toEqual(["bobs"])
          expect(yield* ids(UserId.make("no-such-user"), at(0))).toEqual([])
        })
      )
    )

    it.effect("liveFamiliesOf shows a rotation's new last use and expiry", () =>
      run(
        Effect.gen(function* () {
          const tokens = yield* RefreshTokenRepo
          const alice = yield* createUser("alice@example.com")
          const phone = family(alice, "phone", at(0))
          yield* start(phone)
          const now = at(60_000 + 321)
          const successor = new StoredRefreshToken({
            digest: "digest-phone-2",
            family_id: phone.family_id,
            issued_at: now,
            expires_at: at(40 * DAY + 5),
            rotated_at: Option.none(),
            sealed_successor: Option.none()
          })
          expect(
            yield* tokens.rotate({ presented: "digest-phone", successor, sealedSuccessor: Option.none(), now })
          ).toBe(true)
          expect(yield* liveOf(alice.id, now)).toEqual([
            encodeFamily(new TokenFamily({ ...phone, last_used_at: now, expires_at: at(40 * DAY + 5) }))
          ])
        })
      )
    )

    it.effect(
      "liveFamiliesOf pages most recently used first, by id among equals, after a place and without the one excepted",
      () =>
        run(
          Effect.gen(function* () {
            const tokens = yield* RefreshTokenRepo
            const alice = yield* createUser("alice@example.com")
            const bob = yield* createUser("bob@example.com")
            // Last used: e at 5 s; c and d both at 4 s; b at 3 s; a at 2 s; "ended" and "expired" not live.
            for (const [name, usedAt] of [
              ["a", 2_000],
              ["b", 3_000],
              ["c", 4_000],
              ["d", 4_000],
              ["e", 5_000],
              ["ended", 6_000]
            ] as const) {
              yield* start(family(alice, name, at(usedAt)))
            }
            yield* start(family(alice, "expired", at(-40 * DAY)))
            yield* start(family(bob, "bobs", at(7_000)))
            yield* tokens.revokeFamily(FamilyId.make("ended"), at(6_500))

            const page = (limit: number, after: Option.Option<SessionPosition>, except = Option.none<FamilyId>()) =>
              Effect.map(tokens.liveFamiliesOf(alice.id, at(10_000), { limit, after, except }), (families) =>
                families.map((one) => one.family_id)
              )
            expect(yield* page(10, Option.none())).toEqual(["e", "d", "c", "b", "a"])
            expect(yield* page(2, Option.none())).toEqual(["e", "d"])
            const afterD = Option.some({ last_used_at: START + 4_000, family_id: "d" })
            expect(yield* page(2, afterD)).toEqual(["c", "b"])
            expect(yield* page(10, Option.some({ last_used_at: START + 2_000, family_id: "a" }))).toEqual([])
            expect(yield* page(10, Option.some(listTop))).toEqual(["e", "d", "c", "b", "a"])
            expect(yield* page(10, afterD, Option.some(FamilyId.make("b")))).toEqual(["c", "a"])
            expect(yield* page(10, Option.none(), Option.some(FamilyId.make("e")))).toEqual(["d", "c", "b", "a"])
          })
        )
    )

    it.effect("liveFamily answers the user's family only while it is live", () =>
      run(
        Effect.gen(function* () {
          const tokens = yield* RefreshTokenRepo
          const alice = yield* createUser("alice@example.com")
          const bob = yield* createUser("bob@example.com")
          const phone = family(alice, "phone", at(0), { expires_at: at(DAY) })
          yield* start(phone)
          yield* start(family(alice, "ended", at(0)))
          yield* tokens.revokeFamily(FamilyId.make("ended"), at(1))
          const one = (owner: User, id: string, now: DateTime.Utc) =>
            Effect.map(
              tokens.liveFamily(owner.id, FamilyId.make(id), now),
              Option.map((found) => encodeFamily(found))
            )
          expect(yield* one(alice, "phone", at(10))).toEqual(Option.some(encodeFamily(phone)))
          expect(yield* one(bob, "phone", at(10))).toEqual(Option.none())
          expect(yield* one(alice, "phone", at(DAY))).toEqual(Option.none())
          expect(yield* one(alice, "ended", at(10))).toEqual(Option.none())
          expect(yield* one(alice, "nothing", at(10))).toEqual(Option.none())
        })
      )
    )

    it.effect("rotate records the refresh's client as the session's latest; an unknown part keeps the old", () =>
      run(
        Effect.gen(function* () {
          const tokens = yield* RefreshTokenRepo
          const alice = yield* createUser("alice@example.com")
          const phone = family(alice, "phone", at(0), { ip_address: "198.51.100.1", user_agent: "Phone/1" })
          yield* start(phone)
          const rotation = (from: string, to: string, offset: number) => {
            const now = at(offset)
            const successor = new StoredRefreshToken({
              digest: to,
              family_id: phone.family_id,
              issued_at: now,
              expires_at: at(offset + 30 * DAY),
              rotated_at: Option.none(),
              sealed_successor: Option.none()
            })
            return { presented: from, successor, sealedSuccessor: Option.none<string>(), now }
          }
          const clientOf = Effect.map(liveOf(alice.id, at(10_000)), ([only]) => [only?.ip_address, only?.user_agent])

          const moved = { ip_address: "203.0.113.9", user_agent: "Phone/2" }
          expect(yield* tokens.rotate({ ...rotation("digest-phone", "d2", 1_000), client: moved })).toBe(true)
          expect(yield* clientOf).toEqual(["203.0.113.9", "Phone/2"])

          const noAgent = { ip_address: "203.0.113.10", user_agent: null }
          expect(yield* tokens.rotate({ ...rotation("d2", "d3", 2_000), client: noAgent })).toBe(true)
          expect(yield* clientOf).toEqual(["203.0.113.10", "Phone/2"])

          expect(yield* tokens.rotate(rotation("d3", "d4", 3_000))).toBe(true)
          expect(yield* clientOf).toEqual(["203.0.113.10", "Phone/2"])
        })
      )
    )

    it.effect("revokeFamilyOfUser ends the owner's live family once: true, then false", () =>
      run(
        Effect.gen(function* () {
          const tokens = yield* RefreshTokenRepo
          const alice = yield* createUser("alice@example.com")
          yield* start(family(alice, "phone", at(0)))
          yield* start(family(alice, "laptop", at(0)))

          expect(yield* tokens.revokeFamilyOfUser(alice.id, FamilyId.make("phone"), at(5_000))).toBe(true)
          expect(yield* revokedAt("phone")).toEqual(Option.some(at(5_000)))
          expect(yield* tokens.revokeFamilyOfUser(alice.id, FamilyId.make("phone"), at(6_000))).toBe(false)
          expect(yield* revokedAt("phone")).toEqual(Option.some(at(5_000)))
          expect(yield* revokedAt("laptop")).toEqual(Option.none())
          expect((yield* liveOf(alice.id, at(6_000))).map((row) => row.family_id)).toEqual(["laptop"])
        })
      )
    )

    it.effect("revokeFamilyOfUser refuses another user's family and leaves it live", () =>
      run(
        Effect.gen(function* () {
          const tokens = yield* RefreshTokenRepo
          const alice = yield* createUser("alice@example.com")
          const mallory = yield* createUser("mallory@example.com")
          yield* start(family(alice, "alices", at(0)))
          yield* start(family(mallory, "mallorys", at(0)))

          expect(yield* tokens.revokeFamilyOfUser(mallory.id, FamilyId.make("alices"), at(1_000))).toBe(false)
          expect(yield* revokedAt("alices")).toEqual(Option.none())
          expect(yield* revokedAt("mallorys")).toEqual(Option.none())
          expect((yield* liveOf(alice.id, at(1_000))).map((row) => row.family_id)).toEqual(["alices"])
        })
      )
    )

    it.effect("revokeFamilyOfUser answers false for an unknown or expired family and changes nothing", () =>
      run(
        Effect.gen(function* () {
          const tokens = yield* RefreshTokenRepo
          const alice = yield* createUser("alice@example.com")
          yield* start(family(alice, "old", at(0), { expires_at: at(DAY) }))
          expect(yield* tokens.revokeFamilyOfUser(alice.id, FamilyId.make("no-such-family"), at(1_000))).toBe(false)
          expect(yield* tokens.revokeFamilyOfUser(alice.id, FamilyId.make("old"), at(DAY))).toBe(false)
          expect(yield* revokedAt("old")).toEqual(Option.none())
        })
      )
    )

    it.effect("a family ended by revokeFamilyOfUser can no longer rotate", () =>
      run(
        Effect.gen(function* () {
          const tokens = yield* RefreshTokenRepo
          const alice = yield* createUser("alice@example.com")
          const phone = family(alice, "phone", at(0))
          yield* start(phone)
          expect(yield* tokens.revokeFamilyOfUser(alice.id, phone.family_id, at(1_000))).toBe(true)
          const now = at(2_000)
          const successor = new StoredRefreshToken({
            digest: "digest-phone-2",
            family_id: phone.family_id,
            issued_at: now,
            expires_at: at(30 * DAY),
            rotated_at: Option.none(),
            sealed_successor: Option.none()
          })
          expect(
            yield* tokens.rotate({ presented: "digest-phone", successor, sealedSuccessor: Option.none(), now })
          ).toBe(false)
          expect(yield* tokens.findByDigest("digest-phone-2")).toEqual(Option.none())
        })
      )
    )
  })
}
