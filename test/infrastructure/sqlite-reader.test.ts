import * as SqlClient from "@effect/sql/SqlClient"
import * as Statement from "@effect/sql/Statement"
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Option } from "effect"
import { RefreshTokenRepo } from "../../application/ports/RefreshTokenRepo.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { FamilyId, StoredRefreshToken, TokenFamily } from "../../domain/Session.js"
import { Email, type UserId } from "../../domain/User.js"
import { sqliteFile, sqliteFileWithClient } from "../support/databases.js"

/**
 * The reading connection of a SQLite file: the hot reads go there, outside the client, and see
 * every commit; inside a transaction they stay on the transaction's connection, which alone sees
 * the transaction's own writes.
 */

const now = DateTime.unsafeMake(Date.UTC(2035, 1, 2, 3, 4, 5))

const newUser = (address: string) =>
  Effect.flatMap(UserRepo, (users) =>
    users.create({
      email: Email.make(address),
      hashed_password: Option.none(),
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
      expires_at: DateTime.addDuration(now, "1 day"),
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

/** The SQL text of every statement `effect` runs through the client. */
const throughClient = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
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

describe("the reading connection of a SQLite file", () => {
  it.effect("answers a user by id and by login, and a refresh token, outside the client, up to the last commit", () =>
    Effect.gen(function* () {
      const users = yield* UserRepo
      const families = yield* RefreshTokenRepo
      const user = yield* newUser("reader@example.com")
      yield* startFamily(user.id, "family-1")
      const read = yield* throughClient(
        Effect.all([
          users.findById(user.id),
          users.findByLogin("email", "reader@example.com"),
          families.findByDigest("digest-family-1")
        ])
      )
      expect(read.statements).toEqual([])
      const [byId, byLogin, byDigest] = read.value
      expect([Option.isSome(byId), Option.isSome(byLogin), Option.isSome(byDigest)]).toEqual([true, true, true])
      yield* families.revokeFamily(FamilyId.make("family-1"), now)
      const found = yield* families.findByDigest("digest-family-1")
      expect(Option.map(found, ({ family }) => Option.isSome(family.revoked_at))).toEqual(Option.some(true))
    }).pipe(Effect.provide(sqliteFile.repositories()))
  )

  it.effect("stays off inside a transaction, which reads its own writes before they are committed", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const users = yield* UserRepo
      const inside = yield* sql.withTransaction(
        Effect.gen(function* () {
          const user = yield* newUser("inside@example.com")
          return yield* throughClient(users.findById(user.id))
        })
      )
      expect(Option.isSome(inside.value)).toBe(true)
      expect(inside.statements).toHaveLength(1)
    }).pipe(Effect.provide(sqliteFileWithClient()))
  )
})
