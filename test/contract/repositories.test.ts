import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Logger, LogLevel, Option, Schema, TestClock } from "effect"
import { RefreshTokenRepo } from "../../application/ports/RefreshTokenRepo.js"
import { Transaction } from "../../application/ports/Transaction.js"
import { type NewUser, UserRepo } from "../../application/ports/UserRepo.js"
import { UserAlreadyExistsError } from "../../domain/errors.js"
import { FamilyId, StoredRefreshToken, TokenFamily } from "../../domain/Session.js"
import { Email, User, UserId } from "../../domain/User.js"
import { type Database, databases, postgresqlFast, sqliteFileFast, sqliteWithClient } from "../support/databases.js"

/** An instant with a millisecond part, so that a store rounding to seconds would show. */
const START = Date.UTC(2033, 2, 3, 4, 5, 6, 789)

const encodeUser = Schema.encodeSync(User)
const encodeFamily = Schema.encodeSync(TokenFamily)
const encodeToken = Schema.encodeSync(StoredRefreshToken)
const email = Schema.decodeSync(Email)

const newUser = (address: string, overrides: Partial<NewUser> = {}): NewUser => ({
  email: email(address),
  hashed_password: Option.some(`$argon2id$v=19$m=19456,t=2,p=1$salt$hash-of-${address}`),
  is_active: true,
  is_verified: false,
  is_superuser: false,
  ...overrides
})

const at = (offsetMillis: number) => DateTime.unsafeMake(START + offsetMillis)

const family = (userId: UserId, id: string, createdAt: DateTime.Utc, overrides: Partial<TokenFamily> = {}) =>
  new TokenFamily({
    family_id: FamilyId.make(id),
    user_id: userId,
    ip_address: "198.51.100.23",
    user_agent: "Mozilla/5.0 (test)",
    created_at: createdAt,
    last_used_at: createdAt,
    expires_at: DateTime.addDuration(createdAt, "30 days"),
    revoked_at: Option.none(),
    ...overrides
  })

const token = (digest: string, familyId: string, issuedAt: DateTime.Utc, overrides: Partial<StoredRefreshToken> = {}) =>
  new StoredRefreshToken({
    digest,
    family_id: FamilyId.make(familyId),
    issued_at: issuedAt,
    expires_at: DateTime.addDuration(issuedAt, "30 days"),
    rotated_at: Option.none(),
    sealed_successor: Option.none(),
    ...overrides
  })

/** A user and one live family with its first token, `digest`. */
const userWithSession = (address: string, familyId: string, digest: string) =>
  Effect.gen(function* () {
    const users = yield* UserRepo
    const tokens = yield* RefreshTokenRepo
    const user = yield* users.create(newUser(address))
    const first = family(user.id, familyId, at(0))
    yield* tokens.startFamily(first, token(digest, familyId, at(0)))
    return { user, family: first }
  })

const found = <A>(option: Option.Option<A>): A => Option.getOrThrowWith(option, () => new Error("expected a value"))

/** Runs `effect` at START over a fresh database of `backend`. */
const runOn =
  (backend: Database) =>
  <A, E>(effect: Effect.Effect<A, E, UserRepo | RefreshTokenRepo | Transaction>) =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      return yield* effect
    }).pipe(Effect.provide(backend.repositories()))

for (const backend of [...databases, sqliteFileFast, postgresqlFast]) {
  const run = runOn(backend)

  describe.skipIf(backend.skip)(`UserRepo contract (${backend.name})`, () => {
    it.effect("create answers the stored user, found again by id and by email", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const created = yield* users.create(newUser("alice@example.com", { is_verified: true }))
          expect(created.email).toBe("alice@example.com")
          expect(created.is_verified).toBe(true)
          expect(created.roles).toEqual([])
          expect(DateTime.toEpochMillis(created.created_at)).toBe(START)
          expect(created.id.length).toBeGreaterThan(0)

          expect(encodeUser(found(yield* users.findById(created.id)))).toEqual(encodeUser(created))
          expect(encodeUser(found(yield* users.findByLogin("email", "alice@example.com")))).toEqual(encodeUser(created))
        })
      )
    )

    it.effect("inside a transaction, a read by id sees its writes; rolled back, they are gone", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const tx = yield* Transaction
          const kept = yield* users.create(newUser("kept@example.com"))
          let addedId: UserId | undefined
          const rolledBack = yield* Effect.flip(
            tx.transaction(
              Effect.gen(function* () {
                const added = yield* users.create(newUser("added@example.com"))
                addedId = added.id
                expect(Option.map(yield* users.findById(added.id), (user) => user.email)).toEqual(
                  Option.some("added@example.com")
                )
                yield* users.setPassword(kept.id, "$argon2id$v=19$m=19456,t=2,p=1$salt$changed")
                expect(Option.flatMap(yield* users.findById(kept.id), (user) => user.hashed_password)).toEqual(
                  Option.some("$argon2id$v=19$m=19456,t=2,p=1$salt$changed")
                )
                return yield* Effect.fail("undone" as const)
              })
            )
          )
          expect(rolledBack).toBe("undone")
          expect(yield* users.findById(found(Option.fromNullable(addedId)))).toEqual(Option.none())
          expect(encodeUser(found(yield* users.findById(kept.id)))).toEqual(encodeUser(kept))
        })
      )
    )

    it.effect("moves the credential version on, compared and set when a version is expected", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const created = yield* users.create(newUser("versioned@example.com"))
          expect(created.credential_version).toBe(0)
          expect(yield* users.holdCredentials(created.id, 0)).toBe(true)
          expect(yield* users.changeCredentials(created.id)).toBe(true)
          const moved = found(yield* users.findById(created.id))
          expect(moved.credential_version).toBe(1)
          expect(yield* users.holdCredentials(created.id, 0)).toBe(false)
          expect(yield* users.holdCredentials(created.id, 1)).toBe(true)
          // A change expecting the old version loses; one expecting the current one wins.
          expect(yield* users.changeCredentials(created.id, 0)).toBe(false)
          expect(yield* users.changeCredentials(created.id, 1)).toBe(true)
          expect(found(yield* users.findById(created.id)).credential_version).toBe(2)
          const nobody = UserId.make("00000000-0000-4000-8000-000000000000")
          expect(yield* users.changeCredentials(nobody)).toBe(false)
          expect(yield* users.holdCredentials(nobody, 0)).toBe(false)
        })
      )
    )

    it.effect("keeps a user without a password and each flag as given", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const created = yield* users.create(
            newUser("oauth@example.com", {
              hashed_password: Option.none(),
              is_active: false,
              is_verified: true,
              is_superuser: true
            })
          )
          const stored = found(yield* users.findById(created.id))
          expect(stored.hashed_password).toEqual(Option.none())
          expect([stored.is_active, stored.is_verified, stored.is_superuser]).toEqual([false, true, true])
        })
      )
    )

    it.effect("finds nothing for an unknown id, an unknown email or another login field", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          yield* users.create(newUser("alice@example.com"))
          expect(yield* users.findById(UserId.make("00000000-0000-7000-8000-000000000000"))).toEqual(Option.none())
          expect(yield* users.findByLogin("email", "bob@example.com")).toEqual(Option.none())
          expect(yield* users.findByLogin("username", "alice@example.com")).toEqual(Option.none())
        })
      )
    )

    it.effect("gives each user its own id", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const alice = yield* users.create(newUser("alice@example.com"))
          const bob = yield* users.create(newUser("bob@example.com"))
          expect(alice.id).not.toBe(bob.id)
          expect(found(yield* users.findById(bob.id)).email).toBe("bob@example.com")
        })
      )
    )

    it.effect("refuses a taken email with UserAlreadyExistsError and keeps the first user", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const first = yield* users.create(newUser("alice@example.com"))
          yield* TestClock.adjust("1 hour")
          const error = yield* Effect.flip(
            users.create(newUser("alice@example.com", { hashed_password: Option.none(), is_superuser: true }))
          )
          expect(error).toBeInstanceOf(UserAlreadyExistsError)
          expect(encodeUser(found(yield* users.findByLogin("email", "alice@example.com")))).toEqual(encodeUser(first))
        })
      )
    )

    it.effect("setPassword replaces the hash", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const alice = yield* users.create(newUser("alice@example.com", { hashed_password: Option.none() }))
          const bob = yield* users.create(newUser("bob@example.com"))
          yield* users.setPassword(alice.id, "$argon2id$new-hash")
          expect(found(yield* users.findById(alice.id)).hashed_password).toEqual(Option.some("$argon2id$new-hash"))
          expect(found(yield* users.findById(bob.id)).hashed_password).toEqual(bob.hashed_password)
          yield* users.setPassword(UserId.make("no-such-user"), "$argon2id$x")
        })
      )
    )

    it.effect("clearPassword leaves that user, and only that one, without a password", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const alice = yield* users.create(newUser("alice@example.com"))
          const bob = yield* users.create(newUser("bob@example.com"))
          yield* users.clearPassword(alice.id)
          expect(found(yield* users.findById(alice.id)).hashed_password).toEqual(Option.none())
          expect(found(yield* users.findById(bob.id)).hashed_password).toEqual(bob.hashed_password)
          expect(Option.isSome(bob.hashed_password)).toBe(true)
          yield* users.clearPassword(UserId.make("no-such-user"))
        })
      )
    )

    it.effect("setFlags changes only the flags given and answers the updated user", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const alice = yield* users.create(newUser("alice@example.com"))
          const updated = found(yield* users.setFlags(alice.id, { is_superuser: true, is_active: false }))
          expect(encodeUser(updated)).toEqual(encodeUser(new User({ ...alice, is_superuser: true, is_active: false })))
          expect(encodeUser(found(yield* users.findById(alice.id)))).toEqual(encodeUser(updated))

          const verified = found(yield* users.setFlags(alice.id, { is_verified: true }))
          expect([verified.is_active, verified.is_verified, verified.is_superuser]).toEqual([false, true, true])

          const unchanged = found(yield* users.setFlags(alice.id, {}))
          expect(encodeUser(unchanged)).toEqual(encodeUser(verified))
        })
      )
    )

    it.effect("setFlags answers none for an unknown user", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          expect(yield* users.setFlags(UserId.make("no-such-user"), { is_active: false })).toEqual(Option.none())
          expect(yield* users.setFlags(UserId.make("no-such-user"), {})).toEqual(Option.none())
        })
      )
    )

    it.effect("delete removes the user, frees its email and leaves the others", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const alice = yield* users.create(newUser("alice@example.com"))
          const bob = yield* users.create(newUser("bob@example.com"))
          yield* users.delete(alice.id)
          expect(yield* users.findById(alice.id)).toEqual(Option.none())
          expect(yield* users.findByLogin("email", "alice@example.com")).toEqual(Option.none())
          expect(Option.isSome(yield* users.findById(bob.id))).toBe(true)
          const again = yield* users.create(newUser("alice@example.com"))
          expect(again.id).not.toBe(alice.id)
          yield* users.delete(UserId.make("no-such-user"))
        })
      )
    )
  })
}

// The rotation of a SQLite file's own adapter (infrastructure/sql/fast/) is held here too.
for (const backend of [...databases, sqliteFileFast, postgresqlFast]) {
  const run = runOn(backend)

  describe.skipIf(backend.skip)(`RefreshTokenRepo contract (${backend.name})`, () => {
    it.effect("startFamily then findByDigest answers the token and its family, every field to the millisecond", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const tokens = yield* RefreshTokenRepo
          const user = yield* users.create(newUser("alice@example.com"))
          const withClient = family(user.id, "family-a", at(1), { expires_at: at(86_400_000 + 7) })
          const withoutClient = family(user.id, "family-b", at(2), { ip_address: null, user_agent: null })
          const first = token("digest-a", "family-a", at(1), { expires_at: at(86_400_000 + 7) })
          const second = token("digest-b", "family-b", at(2))
          yield* tokens.startFamily(withClient, first)
          yield* tokens.startFamily(withoutClient, second)

          const a = found(yield* tokens.findByDigest("digest-a"))
          expect(encodeToken(a.token)).toEqual(encodeToken(first))
          expect(encodeFamily(a.family)).toEqual(encodeFamily(withClient))
          expect(DateTime.toEpochMillis(a.token.expires_at)).toBe(START + 86_400_007)

          const b = found(yield* tokens.findByDigest("digest-b"))
          expect(encodeToken(b.token)).toEqual(encodeToken(second))
          expect(encodeFamily(b.family)).toEqual(encodeFamily(withoutClient))

          expect(yield* tokens.findByDigest("digest-unknown")).toEqual(Option.none())
        })
      )
    )

    it.effect("rotate marks the token rotated, stores the sealed successor and renews the family", () =>
      run(
        Effect.gen(function* () {
          const tokens = yield* RefreshTokenRepo
          yield* userWithSession("alice@example.com", "family-a", "digest-1")
          const now = at(60_000 + 321)
          const successor = token("digest-2", "family-a", now, { expires_at: at(40 * 86_400_000 + 5) })

          const rotated = yield* tokens.rotate({
            presented: "digest-1",
            successor,
            sealedSuccessor: Option.some("v1.iv.sealed-pair"),
            now
          })
          expect(rotated).toBe(true)

          const old = found(yield* tokens.findByDigest("digest-1"))
          expect(old.token.rotated_at).toEqual(Option.some(now))
          expect(old.token.sealed_successor).toEqual(Option.some("v1.iv.sealed-pair"))
          expect(DateTime.toEpochMillis(old.family.last_used_at)).toBe(START + 60_321)
          expect(DateTime.toEpochMillis(old.family.expires_at)).toBe(START + 40 * 86_400_000 + 5)
          expect(DateTime.toEpochMillis(old.family.created_at)).toBe(START)
          expect(old.family.revoked_at).toEqual(Option.none())

          const next = found(yield* tokens.findByDigest("digest-2"))
          expect(encodeToken(next.token)).toEqual(encodeToken(successor))
          expect(encodeFamily(next.family)).toEqual(encodeFamily(old.family))
        })
      )
    )

    it.effect("rotate without a grace window keeps no sealed successor", () =>
      run(
        Effect.gen(function* () {
          const tokens = yield* RefreshTokenRepo
          yield* userWithSession("alice@example.com", "family-a", "digest-1")
          const now = at(1_000)
          const rotated = yield* tokens.rotate({
            presented: "digest-1",
            successor: token("digest-2", "family-a", now),
            sealedSuccessor: Option.none(),
            now
          })
          expect(rotated).toBe(true)
          const old = found(yield* tokens.findByDigest("digest-1"))
          expect(old.token.rotated_at).toEqual(Option.some(now))
          expect(old.token.sealed_successor).toEqual(Option.none())
        })
      )
    )

    it.effect("rotate wins once: rotating the same token again answers false and stores nothing", () =>
      run(
        Effect.gen(function* () {
          const tokens = yield* RefreshTokenRepo
          yield* userWithSession("alice@example.com", "family-a", "digest-1")
          const first = at(1_000)
          const later = at(2_000)
          expect(
            yield* tokens.rotate({
              presented: "digest-1",
              successor: token("digest-2", "family-a", first),
              sealedSuccessor: Option.some("first-pair"),
              now: first
            })
          ).toBe(true)
          expect(
            yield* tokens.rotate({
              presented: "digest-1",
              successor: token("digest-3", "family-a", later),
              sealedSuccessor: Option.some("second-pair"),
              now: later
            })
          ).toBe(false)

          const old = found(yield* tokens.findByDigest("digest-1"))
          expect(old.token.rotated_at).toEqual(Option.some(first))
          expect(old.token.sealed_successor).toEqual(Option.some("first-pair"))
          expect(old.family.last_used_at).toEqual(first)
          expect(yield* tokens.findByDigest("digest-3")).toEqual(Option.none())
        })
      )
    )

    it.effect("rotate answers false for an unknown digest", () =>
      run(
        Effect.gen(function* () {
          const tokens = yield* RefreshTokenRepo
          yield* userWithSession("alice@example.com", "family-a", "digest-1")
          const now = at(1_000)
          expect(
            yield* tokens.rotate({
              presented: "digest-unknown",
              successor: token("digest-2", "family-a", now),
              sealedSuccessor: Option.none(),
              now
            })
          ).toBe(false)
          expect(yield* tokens.findByDigest("digest-2")).toEqual(Option.none())
          expect(found(yield* tokens.findByDigest("digest-1")).family.last_used_at).toEqual(at(0))
        })
      )
    )

    it.effect("rotate answers false for a token of a revoked family, and changes nothing", () =>
      run(
        Effect.gen(function* () {
          const tokens = yield* RefreshTokenRepo
          yield* userWithSession("alice@example.com", "family-a", "digest-1")
          expect(yield* tokens.revokeFamily(FamilyId.make("family-a"), at(500))).toBe(true)
          const now = at(1_000)
          expect(
            yield* tokens.rotate({
              presented: "digest-1",
              successor: token("digest-2", "family-a", now),
              sealedSuccessor: Option.some("pair"),
              now
            })
          ).toBe(false)
          const old = found(yield* tokens.findByDigest("digest-1"))
          expect(old.token.rotated_at).toEqual(Option.none())
          expect(old.token.sealed_successor).toEqual(Option.none())
          expect(old.family.last_used_at).toEqual(at(0))
          expect(yield* tokens.findByDigest("digest-2")).toEqual(Option.none())
        })
      )
    )

    it.effect("of 50 concurrent rotations of one token, exactly one wins", () =>
      run(
        Effect.gen(function* () {
          const tokens = yield* RefreshTokenRepo
          yield* userWithSession("alice@example.com", "family-a", "digest-1")
          const attempts = Array.from({ length: 50 }, (_, index) => index)
          const results = yield* Effect.all(
            attempts.map((index) =>
              tokens.rotate({
                presented: "digest-1",
                successor: token(`successor-${index}`, "family-a", at(1_000 + index)),
                sealedSuccessor: Option.some(`pair-${index}`),
                now: at(1_000 + index)
              })
            ),
            { concurrency: "unbounded" }
          )
          expect(results.filter((won) => won)).toHaveLength(1)
          const winner = results.indexOf(true)

          const stored = yield* Effect.forEach(attempts, (index) => tokens.findByDigest(`successor-${index}`))
          expect(stored.flatMap((option, index) => (Option.isSome(option) ? [index] : []))).toEqual([winner])
          const old = found(yield* tokens.findByDigest("digest-1"))
          expect(old.token.sealed_successor).toEqual(Option.some(`pair-${winner}`))
          expect(old.token.rotated_at).toEqual(Option.some(at(1_000 + winner)))
        })
      )
    )

    it.effect("revokeFamily ends a live family once: true, then false", () =>
      run(
        Effect.gen(function* () {
          const tokens = yield* RefreshTokenRepo
          yield* userWithSession("alice@example.com", "family-a", "digest-1")
          const familyId = FamilyId.make("family-a")
          expect(yield* tokens.revokeFamily(familyId, at(5_000))).toBe(true)
          expect(yield* tokens.revokeFamily(familyId, at(6_000))).toBe(false)
          expect(found(yield* tokens.findByDigest("digest-1")).family.revoked_at).toEqual(Option.some(at(5_000)))
          expect(yield* tokens.revokeFamily(FamilyId.make("family-unknown"), at(6_000))).toBe(false)
        })
      )
    )

    it.effect(
      "endFamiliesOfUser ends, a batch at a time, every family of the user not yet ended but the one excepted",
      () =>
        run(
          Effect.gen(function* () {
            const users = yield* UserRepo
            const tokens = yield* RefreshTokenRepo
            const alice = yield* users.create(newUser("alice@example.com"))
            const bob = yield* users.create(newUser("bob@example.com"))
            for (const [owner, name, created] of [
              [alice, "a1", at(0)],
              [alice, "a2", at(0)],
              [alice, "a3", at(0)],
              [alice, "a4", at(0)],
              [alice, "a5-expired", at(-90 * 86_400_000)],
              [bob, "b1", at(0)]
            ] as const) {
              yield* tokens.startFamily(family(owner.id, name, created), token(`digest-${name}`, name, created))
            }
            expect(yield* tokens.revokeFamily(FamilyId.make("a4"), at(1_000))).toBe(true)

            const except = Option.some(FamilyId.make("a1"))
            // a2, a3 and the expired a5 are left: two batches of two, the second finding none beyond.
            const first = yield* tokens.endFamiliesOfUser(alice.id, at(2_000), except, 2)
            expect(first).toMatchObject({ ended: 2, done: false })
            const second = yield* tokens.endFamiliesOfUser(alice.id, at(2_000), except, 2)
            expect(second).toMatchObject({ ended: 1, done: true })
            // The expired family is ended too, but it was not live.
            expect(first.live + second.live).toBe(2)

            const revokedAt = (name: string) =>
              Effect.map(tokens.findByDigest(`digest-${name}`), (option) => found(option).family.revoked_at)
            expect(yield* revokedAt("a1")).toEqual(Option.none())
            expect(yield* revokedAt("a2")).toEqual(Option.some(at(2_000)))
            expect(yield* revokedAt("a3")).toEqual(Option.some(at(2_000)))
            expect(yield* revokedAt("a4")).toEqual(Option.some(at(1_000)))
            expect(yield* revokedAt("a5-expired")).toEqual(Option.some(at(2_000)))
            expect(yield* revokedAt("b1")).toEqual(Option.none())

            expect(yield* tokens.endFamiliesOfUser(alice.id, at(3_000), Option.none(), 10)).toEqual({
              ended: 1,
              live: 1,
              done: true
            })
            expect(yield* revokedAt("a1")).toEqual(Option.some(at(3_000)))
            expect(yield* tokens.endFamiliesOfUser(alice.id, at(4_000), Option.none(), 10)).toEqual({
              ended: 0,
              live: 0,
              done: true
            })
            expect(yield* revokedAt("b1")).toEqual(Option.none())
          })
        )
    )

    it.effect("endLeastRecentlyUsed keeps the most recently used and ends the rest, answering the live ones", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const tokens = yield* RefreshTokenRepo
          const alice = yield* users.create(newUser("alice@example.com"))
          const bob = yield* users.create(newUser("bob@example.com"))
          // Last used in the order of their names; "old" expired long ago, "gone" ended.
          for (const [owner, name, usedAt] of [
            [alice, "old", at(-90 * 86_400_000)],
            [alice, "u1", at(1_000)],
            [alice, "u2", at(2_000)],
            [alice, "u3", at(3_000)],
            [alice, "gone", at(4_000)],
            [alice, "u4", at(5_000)],
            [bob, "b1", at(0)]
          ] as const) {
            yield* tokens.startFamily(family(owner.id, name, usedAt), token(`digest-${name}`, name, usedAt))
          }
          yield* tokens.revokeFamily(FamilyId.make("gone"), at(5_500))

          expect(yield* tokens.endLeastRecentlyUsed(alice.id, at(6_000), 5)).toEqual([])
          expect([...(yield* tokens.endLeastRecentlyUsed(alice.id, at(6_000), 2))].sort()).toEqual(["u1", "u2"])
          const revokedAt = (name: string) =>
            Effect.map(tokens.findByDigest(`digest-${name}`), (option) => found(option).family.revoked_at)
          expect(yield* revokedAt("old")).toEqual(Option.some(at(6_000)))
          expect(yield* revokedAt("u3")).toEqual(Option.none())
          expect(yield* revokedAt("u4")).toEqual(Option.none())
          expect(yield* revokedAt("gone")).toEqual(Option.some(at(5_500)))
          expect(yield* revokedAt("b1")).toEqual(Option.none())
          expect(yield* tokens.endLeastRecentlyUsed(alice.id, at(7_000), 2)).toEqual([])
        })
      )
    )

    it.effect("deleteOfUser deletes a user's tokens, then sessions, a batch at a time, and no one else's", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const tokens = yield* RefreshTokenRepo
          const alice = yield* users.create(newUser("alice@example.com"))
          const bob = yield* users.create(newUser("bob@example.com"))
          for (const [owner, name] of [
            [alice, "a1"],
            [alice, "a2"],
            [alice, "a3"],
            [bob, "b1"]
          ] as const) {
            yield* tokens.startFamily(family(owner.id, name, at(0)), token(`digest-${name}`, name, at(0)))
          }
          expect(yield* tokens.deleteOfUser(alice.id, "tokens", 2)).toBe(2)
          expect(yield* tokens.deleteOfUser(alice.id, "tokens", 2)).toBe(1)
          expect(yield* tokens.deleteOfUser(alice.id, "tokens", 2)).toBe(0)
          expect(yield* tokens.isEnded(FamilyId.make("a1"))).toBe(false)
          expect(yield* tokens.deleteOfUser(alice.id, "sessions", 2)).toBe(2)
          expect(yield* tokens.deleteOfUser(alice.id, "sessions", 2)).toBe(1)
          expect(yield* tokens.deleteOfUser(alice.id, "sessions", 2)).toBe(0)
          expect(yield* tokens.isEnded(FamilyId.make("a1"))).toBe(true)
          expect(Option.isSome(yield* tokens.findByDigest("digest-b1"))).toBe(true)
        })
      )
    )

    it.effect("isEnded: an ended family and an unknown one are ended, a live or merely expired one is not", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const tokens = yield* RefreshTokenRepo
          const alice = yield* users.create(newUser("alice@example.com"))
          for (const name of ["ended", "live", "expired"]) {
            const created = name === "expired" ? at(-90 * 86_400_000) : at(0)
            yield* tokens.startFamily(family(alice.id, name, created), token(`digest-${name}`, name, created))
          }
          yield* tokens.revokeFamily(FamilyId.make("ended"), at(1_000))
          expect(yield* tokens.isEnded(FamilyId.make("ended"))).toBe(true)
          expect(yield* tokens.isEnded(FamilyId.make("never-started"))).toBe(true)
          expect(yield* tokens.isEnded(FamilyId.make("live"))).toBe(false)
          expect(yield* tokens.isEnded(FamilyId.make("expired"))).toBe(false)
          yield* tokens.endFamiliesOfUser(alice.id, at(2_000), Option.none(), 10)
          expect(yield* tokens.isEnded(FamilyId.make("live"))).toBe(true)
        })
      )
    )
  })
}

describe("SQLite adapters only", () => {
  const run = <A, E>(effect: Effect.Effect<A, E, UserRepo | RefreshTokenRepo | SqlClient.SqlClient>) =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      return yield* effect
    }).pipe(Effect.provide(sqliteWithClient()))

  const count = (table: "users" | "token_families" | "refresh_tokens") =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ readonly n: number }>`SELECT COUNT(*) AS n FROM ${sql(table)}`
      return rows[0]?.n
    })

  it.effect("a refused duplicate email leaves exactly one row", () =>
    run(
      Effect.gen(function* () {
        const users = yield* UserRepo
        yield* users.create(newUser("alice@example.com"))
        const error = yield* Effect.flip(users.create(newUser("alice@example.com")))
        expect(error).toBeInstanceOf(UserAlreadyExistsError)
        expect(yield* count("users")).toBe(1)
      })
    )
  )

  it.effect("deleting a user deletes its families and tokens (foreign keys cascade)", () =>
    run(
      Effect.gen(function* () {
        const users = yield* UserRepo
        const tokens = yield* RefreshTokenRepo
        const { user } = yield* userWithSession("alice@example.com", "family-a", "digest-1")
        yield* userWithSession("bob@example.com", "family-b", "digest-b")
        yield* tokens.rotate({
          presented: "digest-1",
          successor: token("digest-2", "family-a", at(1_000)),
          sealedSuccessor: Option.none(),
          now: at(1_000)
        })
        expect(yield* count("refresh_tokens")).toBe(3)

        yield* users.delete(user.id)
        expect(yield* tokens.findByDigest("digest-1")).toEqual(Option.none())
        expect(yield* tokens.findByDigest("digest-2")).toEqual(Option.none())
        expect(yield* count("token_families")).toBe(1)
        expect(yield* count("refresh_tokens")).toBe(1)
        expect(Option.isSome(yield* tokens.findByDigest("digest-b"))).toBe(true)
      })
    )
  )

  it.effect("a family cannot be started for a user that does not exist", () =>
    run(
      Effect.gen(function* () {
        const tokens = yield* RefreshTokenRepo
        const orphan = family(UserId.make("no-such-user"), "family-x", at(0))
        const exit = yield* Effect.exit(tokens.startFamily(orphan, token("digest-x", "family-x", at(0))))
        expect(exit._tag).toBe("Failure")
        expect(yield* count("token_families")).toBe(0)
        expect(yield* count("refresh_tokens")).toBe(0)
      }).pipe(Effect.provide(Logger.minimumLogLevel(LogLevel.None)))
    )
  )

  it.effect("each test gets a fresh database: nothing from the tests above is left", () =>
    run(
      Effect.gen(function* () {
        expect(yield* count("users")).toBe(0)
      })
    )
  )
})
