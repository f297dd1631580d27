import * as SqlClient from "@effect/sql/SqlClient"
import * as Statement from "@effect/sql/Statement"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { RefreshTokenRepo, sessionPruneSteps } from "../../application/ports/RefreshTokenRepo.js"
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
          // A sign-in's cap, a page of the sessions list, the bulk endings and DELETE /me's batches.
          yield* families.endLeastRecentlyUsed(UserId.make(user.id), at, 500)
          yield* families.liveFamily(UserId.make(user.id), FamilyId.make("mine"), at)
          yield* families.liveFamiliesOf(UserId.make(user.id), at, {
            limit: 100,
            after: Option.some({ last_used_at: at.epochMillis, family_id: "other-9" }),
            except: Option.some(FamilyId.make("mine"))
          })
          yield* families.endFamiliesOfUser(UserId.make(user.id), at, Option.some(FamilyId.make("mine")), 500)
          yield* families.revokeFamily(FamilyId.make("mine"), at)
          yield* families.deleteOfUser(UserId.make(user.id), "tokens", 500)
          yield* families.deleteOfUser(UserId.make(user.id), "sessions", 500)
          yield* users.list({ emailStartsWith: "plans", limit: 50 })
          yield* users.list({ after: user, limit: 50 })
          // Every step of a sweep.
          for (const step of sessionPruneSteps) yield* families.prune(step, at, 1_000, at.epochMillis - 60_000)
        })
      )
      const reads = statements.filter(([text]) => /^\s*(SELECT|UPDATE|DELETE)/i.test(text))
      expect(reads.length).toBeGreaterThanOrEqual(20)
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
