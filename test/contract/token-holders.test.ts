import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Schema } from "effect"
import { RefreshTokenRepo } from "../../application/ports/RefreshTokenRepo.js"
import { TokenHolders } from "../../application/ports/TokenHolders.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { FamilyId } from "../../domain/Session.js"
import { RoleName, User, UserId } from "../../domain/User.js"
import { databases, postgresqlFast, sqliteFileFast } from "../support/databases.js"
import { at, clientStatements, newUser, startFamily, tokenOf } from "../support/sessionRecords.js"

/**
 * The TokenHolders contract: what UserRepo.findById and RefreshTokenRepo.isEnded answer, and what
 * RefreshTokenRepo.findByDigest and UserRepo.findById answer, each as one read, on every adapter.
 */

const encodeUser = Schema.encodeSync(User)

const find = (userId: UserId, familyId: string) =>
  Effect.flatMap(TokenHolders, (holders) => holders.find(userId, FamilyId.make(familyId)))

/** What the two reads it replaces answer. */
const separately = (userId: UserId, familyId: string) =>
  Effect.gen(function* () {
    const user = yield* Effect.flatMap(UserRepo, (users) => users.findById(userId))
    const ended = yield* Effect.flatMap(RefreshTokenRepo, (families) => families.isEnded(FamilyId.make(familyId)))
    return Option.map(user, (found) => ({ user: encodeUser(found), sessionEnded: ended }))
  })

const presented = (digest: string) => Effect.flatMap(TokenHolders, (holders) => holders.presented(digest))

/** A presented refresh token as plain data, to compare answers field by field. */
const plainPresented = (
  found: Option.Option<{ readonly token: object; readonly family: object; readonly user: Option.Option<User> }>
) =>
  Option.map(found, ({ token, family, user }) => ({
    token: { ...token },
    family: { ...family },
    user: Option.map(user, encodeUser)
  }))

/** What the two reads `presented` replaces answer. */
const presentedSeparately = (digest: string) =>
  Effect.gen(function* () {
    const found = yield* Effect.flatMap(RefreshTokenRepo, (families) => families.findByDigest(digest))
    if (Option.isNone(found)) return Option.none()
    const user = yield* Effect.flatMap(UserRepo, (users) => users.findById(found.value.family.user_id))
    return Option.some({ ...found.value, user })
  })

const encoded = (effect: ReturnType<typeof find>) =>
  Effect.map(
    effect,
    Option.map(({ user, sessionEnded }) => ({ user: encodeUser(user), sessionEnded }))
  )

for (const backend of [...databases, sqliteFileFast, postgresqlFast]) {
  const run = <A, E>(effect: Effect.Effect<A, E, UserRepo | RefreshTokenRepo | TokenHolders>) =>
    effect.pipe(Effect.provide(backend.repositories()))

  describe.skipIf(backend.skip)(`TokenHolders contract (${backend.name})`, () => {
    it.effect("answers the user, roles included, and a live session, as the two reads would", () =>
      run(
        Effect.gen(function* () {
          const user = yield* newUser("holder@example.com")
          yield* Effect.flatMap(UserRepo, (users) => users.assignRole(user.id, RoleName.make("editor")))
          yield* startFamily(user.id, "family-live")
          const holder = yield* encoded(find(user.id, "family-live"))
          expect(holder).toEqual(yield* separately(user.id, "family-live"))
          expect(Option.getOrThrow(holder)).toMatchObject({
            user: { email: "holder@example.com", roles: ["editor"], is_active: true },
            sessionEnded: false
          })
        })
      )
    )

    it.effect("answers each change of the user's row the moment it commits, however often it was read before", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const user = yield* newUser("changing@example.com")
          yield* startFamily(user.id, "family-changing")
          const read = Effect.map(find(user.id, "family-changing"), (found) => Option.getOrThrow(found).user)
          for (let i = 0; i < 3; i++) yield* read
          yield* users.assignRole(user.id, RoleName.make("editor"))
          expect((yield* read).roles).toEqual(["editor"])
          yield* users.setPassword(user.id, "$argon2id$changed")
          expect((yield* read).hashed_password).toEqual(Option.some("$argon2id$changed"))
          yield* users.changeCredentials(user.id)
          expect((yield* read).credential_version).toBe(user.credential_version + 1)
          yield* users.setFlags(user.id, { is_active: false })
          expect((yield* read).is_active).toBe(false)
          yield* users.removeRole(user.id, RoleName.make("editor"))
          expect((yield* read).roles).toEqual([])
        })
      )
    )

    it.effect(
      "tells an ended session at once, and a family that never was, while another of the user's stays live",
      () =>
        run(
          Effect.gen(function* () {
            const user = yield* newUser("ended@example.com")
            yield* startFamily(user.id, "family-ended")
            yield* startFamily(user.id, "family-other")
            yield* Effect.flatMap(RefreshTokenRepo, (families) =>
              families.revokeFamily(FamilyId.make("family-ended"), at)
            )
            for (const [family, ended] of [
              ["family-ended", true],
              ["family-never", true],
              ["family-other", false]
            ] as const) {
              const holder = yield* find(user.id, family)
              expect(
                Option.map(holder, (found) => found.sessionEnded),
                family
              ).toEqual(Option.some(ended))
              expect(yield* encoded(find(user.id, family))).toEqual(yield* separately(user.id, family))
            }
          })
        )
    )

    it.effect("presented: the token, its family and its user, roles included, as the two reads would", () =>
      run(
        Effect.gen(function* () {
          const user = yield* newUser("presenter@example.com")
          yield* Effect.flatMap(UserRepo, (users) => users.assignRole(user.id, RoleName.make("editor")))
          yield* startFamily(user.id, "family-presented")
          const found = yield* presented("digest-family-presented")
          expect(plainPresented(found)).toEqual(plainPresented(yield* presentedSeparately("digest-family-presented")))
          expect(Option.getOrThrow(plainPresented(found))).toMatchObject({
            token: { digest: "digest-family-presented", family_id: "family-presented" },
            family: { family_id: "family-presented", user_id: user.id },
            user: Option.some({ email: "presenter@example.com", roles: ["editor"], is_active: true })
          })
        })
      )
    )

    it.effect("presented: a spent token, a token of an ended family, an inactive user, and no token at all", () =>
      run(
        Effect.gen(function* () {
          const user = yield* newUser("spent@example.com")
          yield* startFamily(user.id, "family-spent")
          yield* startFamily(user.id, "family-revoked")
          const families = yield* RefreshTokenRepo
          const rotated = yield* families.rotate({
            presented: "digest-family-spent",
            successor: tokenOf("digest-successor", "family-spent"),
            sealedSuccessor: Option.none(),
            now: at
          })
          expect(rotated).toBe(true)
          yield* families.revokeFamily(FamilyId.make("family-revoked"), at)
          yield* Effect.flatMap(UserRepo, (users) => users.setFlags(user.id, { is_active: false }))
          for (const digest of ["digest-family-spent", "digest-successor", "digest-family-revoked", "digest-never"]) {
            expect(plainPresented(yield* presented(digest)), digest).toEqual(
              plainPresented(yield* presentedSeparately(digest))
            )
          }
          const spent = Option.getOrThrow(yield* presented("digest-family-spent"))
          expect(Option.isSome(spent.token.rotated_at)).toBe(true)
          expect(Option.map(spent.user, (owner) => owner.is_active)).toEqual(Option.some(false))
          const ended = Option.getOrThrow(yield* presented("digest-family-revoked"))
          expect(Option.isSome(ended.family.revoked_at)).toBe(true)
          expect(yield* presented("digest-never")).toEqual(Option.none())
        })
      )
    )

    it.effect("answers none for an unknown user, and an inactive user as inactive", () =>
      run(
        Effect.gen(function* () {
          const user = yield* newUser("inactive@example.com")
          yield* startFamily(user.id, "family-inactive")
          yield* Effect.flatMap(UserRepo, (users) => users.setFlags(user.id, { is_active: false }))
          const holder = yield* find(user.id, "family-inactive")
          expect(Option.map(holder, (found) => found.user.is_active)).toEqual(Option.some(false))
          const unknown = backend.name.includes("integer") ? "987654" : "00000000-0000-7000-8000-000000000000"
          expect(yield* find(UserId.make(unknown), "family-inactive")).toEqual(Option.none())
        })
      )
    )
  })
}

/** Every database: memory (SQLite in memory), SQLite in a file, PostgreSQL; all of them SQL. */
describe.each(databases)("where TokenHolders reads ($name)", (backend) => {
  it.effect.skipIf(backend.skip)("find: through the client, in one statement, and it sees every commit", () =>
    Effect.gen(function* () {
      const user = yield* newUser("reader@example.com")
      yield* startFamily(user.id, "family-reader")
      const live = yield* clientStatements(find(user.id, "family-reader"))
      yield* Effect.flatMap(RefreshTokenRepo, (families) => families.revokeFamily(FamilyId.make("family-reader"), at))
      const ended = yield* clientStatements(find(user.id, "family-reader"))
      expect([live.statements.length, ended.statements.length]).toEqual([1, 1])
      expect([live.value, ended.value].map(Option.map((found) => found.sessionEnded))).toEqual([
        Option.some(false),
        Option.some(true)
      ])
    }).pipe(Effect.provide(backend.repositories()))
  )

  it.effect.skipIf(backend.skip)(
    "presented: through the client, in one statement, and it sees a rotation's commit",
    () =>
      Effect.gen(function* () {
        const user = yield* newUser("presented-reader@example.com")
        yield* startFamily(user.id, "family-presented-reader")
        const live = yield* clientStatements(presented("digest-family-presented-reader"))
        yield* Effect.flatMap(RefreshTokenRepo, (families) =>
          families.rotate({
            presented: "digest-family-presented-reader",
            successor: tokenOf("digest-presented-successor", "family-presented-reader"),
            sealedSuccessor: Option.none(),
            now: at
          })
        )
        const spent = yield* clientStatements(presented("digest-family-presented-reader"))
        expect([live.statements.length, spent.statements.length]).toEqual([1, 1])
        expect([live.value, spent.value].map(Option.map((found) => Option.isSome(found.token.rotated_at)))).toEqual([
          Option.some(false),
          Option.some(true)
        ])
        expect(Option.map(live.value, (found) => Option.map(found.user, (owner) => owner.email))).toEqual(
          Option.some(Option.some("presented-reader@example.com"))
        )
      }).pipe(Effect.provide(backend.repositories()))
  )
})
