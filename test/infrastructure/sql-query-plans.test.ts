import * as SqlClient from "@effect/sql/SqlClient"
import * as Statement from "@effect/sql/Statement"
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Option } from "effect"
import { RefreshTokenRepo } from "../../application/ports/RefreshTokenRepo.js"
import { TokenHolders } from "../../application/ports/TokenHolders.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { FamilyId, StoredRefreshToken, TokenFamily } from "../../domain/Session.js"
import { Email, UserId } from "../../domain/User.js"
import { sqliteWithClient } from "../support/databases.js"

const now = DateTime.unsafeMake(Date.UTC(2034, 0, 2, 3, 4, 5))
const later = DateTime.addDuration(now, "30 days")

const familyOf = (userId: UserId, id: string) =>
  new TokenFamily({
    family_id: FamilyId.make(id),
    user_id: userId,
    ip_address: null,
    user_agent: null,
    created_at: now,
    last_used_at: now,
    expires_at: later,
    revoked_at: Option.none()
  })

const tokenOf = (digest: string, familyId: string) =>
  new StoredRefreshToken({
    digest,
    family_id: FamilyId.make(familyId),
    issued_at: now,
    expires_at: later,
    rotated_at: Option.none(),
    sealed_successor: Option.none()
  })

/** Runs `effect`, answering the SQL text and parameters of every statement it executed. */
const captured = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const statements: Array<readonly [string, ReadonlyArray<unknown>]> = []
    yield* Statement.withTransformer(effect, (statement) =>
      Effect.sync(() => {
        statements.push(statement.compile())
        return statement
      })
    )
    return statements
  })

describe("the SQL of every request's hot path (SQLite)", () => {
  it.effect("finds its rows through an index: no statement scans a whole table", () =>
    Effect.gen(function* () {
      const users = yield* UserRepo
      const families = yield* RefreshTokenRepo
      const holders = yield* TokenHolders
      const sql = yield* SqlClient.SqlClient
      const user = yield* users.create({
        email: Email.make("plans@example.com"),
        hashed_password: Option.some("$argon2id$v=19$m=19456,t=2,p=1$salt$hash"),
        is_active: true,
        is_verified: false,
        is_superuser: false,
        fields: {}
      })
      // Other users' sessions, so that a scan would have rows to read.
      for (let i = 0; i < 50; i++)
        yield* families.startFamily(familyOf(user.id, `other-${i}`), tokenOf(`d-${i}`, `other-${i}`))

      const statements = yield* captured(
        Effect.gen(function* () {
          yield* families.startFamily(familyOf(user.id, "mine"), tokenOf("first", "mine"))
          yield* users.findById(UserId.make(user.id))
          yield* users.findByLogin("email", "plans@example.com")
          yield* families.isEnded(FamilyId.make("mine"))
          yield* holders.find(UserId.make(user.id), FamilyId.make("mine"))
          yield* families.findByDigest("first")
          const rotated = yield* families.rotate({
            presented: "first",
            successor: tokenOf("second", "mine"),
            sealedSuccessor: Option.none(),
            now
          })
          expect(rotated).toBe(true)
          yield* families.revokeFamily(FamilyId.make("mine"), now)
        })
      )
      const reads = statements.filter(([text]) => /^\s*(SELECT|UPDATE|DELETE)/i.test(text))
      expect(reads.length).toBeGreaterThanOrEqual(7)
      for (const [text, params] of reads) {
        const plan = yield* Statement.withTransformerDisabled(
          sql.unsafe<{ readonly detail: string }>(`EXPLAIN QUERY PLAN ${text}`, params as Array<unknown>)
        )
        const scans = plan
          .map((row) => row.detail)
          .filter((detail) => /^SCAN (users|token_families|refresh_tokens)\b/.test(detail))
        expect(scans, text).toEqual([])
      }
    }).pipe(Effect.provide(sqliteWithClient()))
  )
})
