import * as SqlClient from "@effect/sql/SqlClient"
import * as Statement from "@effect/sql/Statement"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { RefreshTokenRepo } from "../../application/ports/RefreshTokenRepo.js"
import { TokenHolders } from "../../application/ports/TokenHolders.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { FamilyId } from "../../domain/Session.js"
import { UserId } from "../../domain/User.js"
import { sqliteWithClient } from "../support/databases.js"
import { at, clientStatements, familyOf, newUser, tokenOf } from "../support/sessionRecords.js"

describe("the SQL of every request's hot path (SQLite)", () => {
  it.effect("finds its rows through an index: no statement scans a whole table", () =>
    Effect.gen(function* () {
      const users = yield* UserRepo
      const families = yield* RefreshTokenRepo
      const holders = yield* TokenHolders
      const sql = yield* SqlClient.SqlClient
      const user = yield* newUser("plans@example.com")
      // Other users' sessions, so that a scan would have rows to read.
      for (let i = 0; i < 50; i++)
        yield* families.startFamily(familyOf(user.id, `other-${i}`), tokenOf(`d-${i}`, `other-${i}`))

      const { statements } = yield* clientStatements(
        Effect.gen(function* () {
          yield* families.startFamily(familyOf(user.id, "mine"), tokenOf("first", "mine"))
          yield* users.findById(UserId.make(user.id))
          yield* users.findByLogin("email", "plans@example.com")
          yield* families.isEnded(FamilyId.make("mine"))
          yield* holders.find(UserId.make(user.id), FamilyId.make("mine"))
          yield* families.findByDigest("first")
          yield* holders.presented("first")
          const rotated = yield* families.rotate({
            presented: "first",
            successor: tokenOf("second", "mine"),
            sealedSuccessor: Option.none(),
            now: at
          })
          expect(rotated).toBe(true)
          yield* families.revokeFamily(FamilyId.make("mine"), at)
        })
      )
      const reads = statements.filter(([text]) => /^\s*(SELECT|UPDATE|DELETE)/i.test(text))
      expect(reads.length).toBeGreaterThanOrEqual(8)
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
