import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Option } from "effect"
import { RefreshTokenRepo } from "../../application/ports/RefreshTokenRepo.js"
import { TokenHolders } from "../../application/ports/TokenHolders.js"
import { Transaction } from "../../application/ports/Transaction.js"
import type { UserRepo } from "../../application/ports/UserRepo.js"
import { postgresFastAdapters, sqlRepositories } from "../../composition/stores.js"
import { FamilyId } from "../../domain/Session.js"
import { open } from "../../infrastructure/sql/fast/connections.js"
import * as Postgres from "../support/postgres.js"
import { holdingWriteLock, onFile, rotatedAt, rotation, session } from "../support/rotations.js"

/**
 * What the fast rotations (infrastructure/sql/fast/) must keep beside the contract suites, which
 * they pass like the plain adapter: SQLite's commits on a connection of its own, so its
 * durability, its turn beside the client's transactions, and its rollback are its own to show;
 * PostgreSQL's runs on the pool, so it must leave a transaction of the client's to that
 * transaction's connection.
 */

describe("the fast rotation of a SQLite file", () => {
  it.live("its connection commits every rotation with synchronous=FULL", () =>
    onFile(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [{ file } = { file: "" }] = yield* sql<{ readonly file: string }>`SELECT file FROM pragma_database_list`
        const db = open(file, "writing")
        try {
          // 2 is FULL: NORMAL (1) may lose the last commits of a WAL database on power loss.
          expect(db.pragma("synchronous", { simple: true })).toBe(2)
          expect(db.pragma("foreign_keys", { simple: true })).toBe(1)
          expect(db.pragma("busy_timeout", { simple: true })).toBe(5000)
        } finally {
          db.close()
        }
      })
    )
  )

  it.live("inside a transaction of the client it joins that transaction and rolls back with it", () =>
    onFile(
      Effect.gen(function* () {
        const familyId = yield* session("inside")
        const tokens = yield* RefreshTokenRepo
        const outcome = yield* (yield* Transaction)
          .transaction(
            Effect.gen(function* () {
              expect(yield* tokens.rotate(rotation("inside", "inside-2", familyId))).toBe(true)
              return yield* Effect.fail("then the use case fails" as const)
            })
          )
          .pipe(Effect.timeout("3 seconds"), Effect.either)
        // It failed as the use case did, not by waiting for the connection its transaction holds.
        expect(outcome).toMatchObject({ _tag: "Left", left: "then the use case fails" })
        expect(yield* rotatedAt("inside")).toEqual(Option.none())
        expect(yield* tokens.findByDigest("inside-2")).toEqual(Option.none())
      })
    )
  )

  it.live("waits for a transaction of the client that holds the write lock, then commits", () =>
    onFile(
      Effect.gen(function* () {
        const familyId = yield* session("waiting")
        const other = yield* session("other")
        const tokens = yield* RefreshTokenRepo
        // A transaction of the client holds the write lock and the permit meanwhile.
        const holding = yield* holdingWriteLock(other, "300 millis")
        yield* Effect.sleep("50 millis")
        const rotated = yield* tokens.rotate(rotation("waiting", "waiting-2", familyId)).pipe(Effect.timed)
        yield* holding.await
        expect(rotated[1]).toBe(true)
        // It waited for the transaction's COMMIT rather than for the driver's busy timeout.
        expect(Duration.toMillis(rotated[0])).toBeLessThan(3_000)
        expect(yield* tokens.isEnded(FamilyId.make(other))).toBe(true)
        expect(Option.isSome(yield* rotatedAt("waiting"))).toBe(true)
      })
    )
  )

  it.live("of many rotations of one token at once, exactly one wins", () =>
    onFile(
      Effect.gen(function* () {
        const familyId = yield* session("raced")
        const tokens = yield* RefreshTokenRepo
        const outcomes = yield* Effect.all(
          Array.from({ length: 12 }, (_, lane) => tokens.rotate(rotation("raced", `raced-${lane}`, familyId))),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter(Boolean)).toHaveLength(1)
      })
    )
  )

  it.live("a statement refused mid-rotation rolls the claim back and answers an unavailable store", () =>
    onFile(
      Effect.gen(function* () {
        const familyId = yield* session("refused")
        yield* session("taken")
        const tokens = yield* RefreshTokenRepo
        // The successor's digest is already stored: the insert breaks the key after the claim.
        const failed = yield* Effect.either(tokens.rotate(rotation("refused", "taken", familyId)))
        expect(failed).toMatchObject({ _tag: "Left", left: { _tag: "StoreUnavailableError" } })
        expect(yield* rotatedAt("refused")).toEqual(Option.none())
        // The connection is left usable: the same rotation with a fresh successor wins.
        expect(yield* tokens.rotate(rotation("refused", "refused-2", familyId))).toBe(true)
      })
    )
  )
})

const onPostgres = <A, E>(
  effect: Effect.Effect<A, E, RefreshTokenRepo | UserRepo | Transaction | SqlClient.SqlClient | TokenHolders>
) => effect.pipe(Effect.provide(sqlRepositories({}, postgresFastAdapters).pipe(Layer.provideMerge(Postgres.layer()))))

describe.skipIf(Postgres.noPostgres)("the fast adapters of PostgreSQL inside a transaction of the client", () => {
  it.live("the rotation joins the transaction and rolls back with it; the reads see what it wrote", () =>
    onPostgres(
      Effect.gen(function* () {
        const familyId = yield* session("inside")
        const tokens = yield* RefreshTokenRepo
        const holders = yield* TokenHolders
        const outcome = yield* (yield* Transaction)
          .transaction(
            Effect.gen(function* () {
              expect(yield* tokens.rotate(rotation("inside", "inside-2", familyId))).toBe(true)
              // Read on the transaction's connection: the successor it stored, not yet committed.
              expect(Option.isSome(yield* holders.presented("inside-2"))).toBe(true)
              return yield* Effect.fail("then the use case fails" as const)
            })
          )
          .pipe(Effect.timeout("3 seconds"), Effect.either)
        expect(outcome).toMatchObject({ _tag: "Left", left: "then the use case fails" })
        expect(yield* rotatedAt("inside")).toEqual(Option.none())
        expect(yield* holders.presented("inside-2")).toEqual(Option.none())
        // Outside a transaction the same rotation commits on its own.
        expect(yield* tokens.rotate(rotation("inside", "inside-3", familyId))).toBe(true)
        expect(Option.isSome(yield* rotatedAt("inside"))).toBe(true)
      })
    )
  )
})
