import * as Statement from "@effect/sql/Statement"
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Option, Schema } from "effect"
import { RefreshTokenRepo } from "../../application/ports/RefreshTokenRepo.js"
import { TokenHolders } from "../../application/ports/TokenHolders.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { FamilyId, StoredRefreshToken, TokenFamily } from "../../domain/Session.js"
import { Email, RoleName, User, UserId } from "../../domain/User.js"
import { databases, sqliteFile, sqliteWithClient } from "../support/databases.js"

/**
 * The TokenHolders contract: what UserRepo.findById and RefreshTokenRepo.isEnded answer, as one
 * read, on every adapter, a SQLite file (read on a connection of its own) included.
 */

const now = DateTime.unsafeMake(Date.UTC(2034, 5, 6, 7, 8, 9, 123))
const encodeUser = Schema.encodeSync(User)

const createUser = (address: string) =>
  Effect.flatMap(UserRepo, (users) =>
    users.create({
      email: Schema.decodeSync(Email)(address),
      hashed_password: Option.some("$argon2id$v=19$m=19456,t=2,p=1$salt$hash"),
      is_active: true,
      is_verified: false,
      is_superuser: false,
      fields: {}
    })
  )

const startFamily = (userId: UserId, id: string) =>
  Effect.flatMap(RefreshTokenRepo, (families) => {
    const family = new TokenFamily({
      family_id: FamilyId.make(id),
      user_id: userId,
      ip_address: null,
      user_agent: null,
      created_at: now,
      last_used_at: now,
      expires_at: DateTime.addDuration(now, "30 days"),
      revoked_at: Option.none()
    })
    return families.startFamily(
      family,
      new StoredRefreshToken({
        digest: `digest-${id}`,
        family_id: family.family_id,
        issued_at: now,
        expires_at: family.expires_at,
        rotated_at: Option.none(),
        sealed_successor: Option.none()
      })
    )
  })

const find = (userId: UserId, familyId: string) =>
  Effect.flatMap(TokenHolders, (holders) => holders.find(userId, FamilyId.make(familyId)))

/** What the two reads it replaces answer. */
const separately = (userId: UserId, familyId: string) =>
  Effect.gen(function* () {
    const user = yield* Effect.flatMap(UserRepo, (users) => users.findById(userId))
    const ended = yield* Effect.flatMap(RefreshTokenRepo, (families) => families.isEnded(FamilyId.make(familyId)))
    return Option.map(user, (found) => ({ user: encodeUser(found), sessionEnded: ended }))
  })

const encoded = (effect: ReturnType<typeof find>) =>
  Effect.map(
    effect,
    Option.map(({ user, sessionEnded }) => ({ user: encodeUser(user), sessionEnded }))
  )

for (const backend of databases) {
  const run = <A, E>(effect: Effect.Effect<A, E, UserRepo | RefreshTokenRepo | TokenHolders>) =>
    effect.pipe(Effect.provide(backend.repositories()))

  describe.skipIf(backend.skip)(`TokenHolders contract (${backend.name})`, () => {
    it.effect("answers the user, roles included, and a live session, as the two reads would", () =>
      run(
        Effect.gen(function* () {
          const user = yield* createUser("holder@example.com")
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

    it.effect(
      "tells an ended session at once, and a family that never was, while another of the user's stays live",
      () =>
        run(
          Effect.gen(function* () {
            const user = yield* createUser("ended@example.com")
            yield* startFamily(user.id, "family-ended")
            yield* startFamily(user.id, "family-other")
            yield* Effect.flatMap(RefreshTokenRepo, (families) =>
              families.revokeFamily(FamilyId.make("family-ended"), now)
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

    it.effect("answers none for an unknown user, and an inactive user as inactive", () =>
      run(
        Effect.gen(function* () {
          const user = yield* createUser("inactive@example.com")
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

/** The statements `effect` runs through the SQL client, as SQL text. */
const clientStatements = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const statements: Array<string> = []
    const value = yield* Statement.withTransformer(effect, (statement) =>
      Effect.sync(() => {
        statements.push(statement.compile()[0])
        return statement
      })
    )
    return { value, statements }
  })

describe("where TokenHolders reads", () => {
  it.effect("on a SQLite file, on its own connection, not the client's, and it still sees every commit", () =>
    Effect.gen(function* () {
      const user = yield* createUser("reader@example.com")
      yield* startFamily(user.id, "family-reader")
      const live = yield* clientStatements(find(user.id, "family-reader"))
      yield* Effect.flatMap(RefreshTokenRepo, (families) => families.revokeFamily(FamilyId.make("family-reader"), now))
      const ended = yield* clientStatements(find(user.id, "family-reader"))
      expect([...live.statements, ...ended.statements]).toEqual([])
      expect([live.value, ended.value].map(Option.map((found) => found.sessionEnded))).toEqual([
        Option.some(false),
        Option.some(true)
      ])
    }).pipe(Effect.provide(sqliteFile.repositories()))
  )

  it.effect("on SQLite's :memory:, through the client, in one statement", () =>
    Effect.gen(function* () {
      const user = yield* createUser("client@example.com")
      yield* startFamily(user.id, "family-client")
      const { value, statements } = yield* clientStatements(find(user.id, "family-client"))
      expect(statements).toHaveLength(1)
      expect(Option.map(value, (found) => found.sessionEnded)).toEqual(Option.some(false))
    }).pipe(Effect.provide(sqliteWithClient()))
  )
})
