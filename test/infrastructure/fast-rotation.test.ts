import { readFileSync } from "node:fs"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Duration, Effect, Layer, Option } from "effect"
import type { OidcClients } from "../../application/ports/OidcClients.js"
import { OidcGrants } from "../../application/ports/OidcGrants.js"
import { RefreshTokenRepo, type Rotation } from "../../application/ports/RefreshTokenRepo.js"
import { TokenHolders } from "../../application/ports/TokenHolders.js"
import { Transaction } from "../../application/ports/Transaction.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { postgresFastAdapters, sqliteFileAdapters, sqlRepositories } from "../../composition/stores.js"
import { FamilyId, StoredRefreshToken, TokenFamily } from "../../domain/Session.js"
import { Email } from "../../domain/User.js"
import { open } from "../../infrastructure/sql/fast/connections.js"
import { StoreTimeout } from "../../infrastructure/storeTimeout.js"
import { sqliteFileWithClient } from "../support/databases.js"
import { addClient, addUser } from "../support/oidcFixtures.js"
import * as Postgres from "../support/postgres.js"

/**
 * What the fast rotations (infrastructure/sql/fast/) must keep beside the contract suites, which
 * they pass like the plain adapter: SQLite's commits on a connection of its own, so its
 * durability, its turn beside the client's transactions, and its rollback are its own to show;
 * PostgreSQL's runs on the pool, so it must leave a transaction of the client's to that
 * transaction's connection.
 */

const now = DateTime.unsafeMake(Date.UTC(2033, 2, 3, 4, 5, 6, 789))
const later = DateTime.addDuration(now, "30 days")

const token = (digest: string, familyId: string) =>
  new StoredRefreshToken({
    digest,
    family_id: FamilyId.make(familyId),
    issued_at: now,
    expires_at: later,
    rotated_at: Option.none(),
    sealed_successor: Option.none()
  })

/** A user with one session whose first token's digest is `first`. */
const session = (first: string) =>
  Effect.gen(function* () {
    const user = yield* (yield* UserRepo).create({
      email: Email.make(`${first}@example.com`),
      hashed_password: Option.none(),
      is_active: true,
      is_verified: false,
      is_superuser: false
    })
    const familyId = `family-${first}`
    const family = new TokenFamily({
      family_id: FamilyId.make(familyId),
      user_id: user.id,
      ip_address: null,
      user_agent: null,
      created_at: now,
      last_used_at: now,
      expires_at: later,
      revoked_at: Option.none()
    })
    yield* (yield* RefreshTokenRepo).startFamily(family, token(first, familyId))
    return familyId
  })

const rotation = (presented: string, successor: string, familyId: string): Rotation => ({
  presented,
  successor: token(successor, familyId),
  sealedSuccessor: Option.none(),
  now
})

const rotatedAt = (digest: string) =>
  Effect.map(
    Effect.flatMap(RefreshTokenRepo, (tokens) => tokens.findByDigest(digest)),
    (found) => Option.flatMap(found, ({ token }) => token.rotated_at)
  )

/** The file the client has open. */
const fileOfClient = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ readonly file: string }>`SELECT file FROM pragma_database_list`, (rows) => rows[0]?.file ?? "")
)

/** Empties the file's write-ahead log into the file, so that the log holds only what comes next. */
const emptyLog = (file: string) =>
  Effect.sync(() => {
    const db = open(file, "writing")
    try {
      expect(db.pragma("wal_checkpoint(TRUNCATE)")).toEqual([{ busy: 0, log: 0, checkpointed: 0 }])
    } finally {
      db.close()
    }
  })

/**
 * The transactions committed in the write-ahead log since it was emptied: its frames of the
 * current salt whose header names the database's size, which only a transaction's last frame does
 * (sqlite.org/fileformat.html, "WAL File Format").
 */
const commitsInLog = (file: string) => {
  const log = readFileSync(`${file}-wal`)
  const pageSize = log.readUInt32BE(8)
  const salt = log.subarray(16, 24)
  let commits = 0
  for (let at = 32; at + 24 + pageSize <= log.length; at += 24 + pageSize) {
    if (!log.subarray(at + 8, at + 16).equals(salt)) break
    if (log.readUInt32BE(at + 4) !== 0) commits++
  }
  return commits
}

const onFile = <A, E>(
  effect: Effect.Effect<
    A,
    E,
    RefreshTokenRepo | UserRepo | Transaction | SqlClient.SqlClient | OidcGrants | OidcClients
  >
) => effect.pipe(Effect.provide(sqliteFileWithClient({}, sqliteFileAdapters)))

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
        const transaction = (yield* Transaction).transaction
        // A transaction that writes first (taking SQLite's write lock) and then waits on something
        // else, as a use case's transaction may between its statements.
        const holding = yield* Effect.fork(
          transaction(Effect.zipRight(tokens.revokeFamily(FamilyId.make(other), now), Effect.sleep("300 millis")))
        )
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

  it.live("rotations that arrive together are committed together, one after another each alone", () =>
    onFile(
      Effect.gen(function* () {
        const families = yield* Effect.all(Array.from({ length: 12 }, (_, lane) => session(`together-${lane}`)))
        const tokens = yield* RefreshTokenRepo
        const file = yield* fileOfClient
        yield* emptyLog(file)
        const outcomes = yield* Effect.all(
          families.map((familyId, lane) => tokens.rotate(rotation(`together-${lane}`, `together-${lane}-2`, familyId))),
          { concurrency: "unbounded" }
        )
        expect(outcomes).toEqual(families.map(() => true))
        // Twelve rotations, one transaction: the disk's sync paid once.
        expect(commitsInLog(file)).toBe(1)
        for (const lane of [0, 5, 11]) expect(Option.isSome(yield* rotatedAt(`together-${lane}`))).toBe(true)

        yield* emptyLog(file)
        for (const lane of [0, 1, 2])
          expect(yield* tokens.rotate(rotation(`together-${lane}-2`, `together-${lane}-3`, families[lane] ?? ""))).toBe(
            true
          )
        expect(commitsInLog(file)).toBe(3)
      })
    )
  )

  it.live("the provider's refresh grants that arrive together are committed together too", () =>
    onFile(
      Effect.gen(function* () {
        const userId = yield* addUser("grants@example.com")
        yield* addClient("app")
        const grants = yield* OidcGrants
        const grantToken = (digest: string, grantId: string) => ({
          digest,
          grant_id: grantId,
          issued_at: now,
          expires_at: later,
          rotated_at: null
        })
        const lanes = Array.from({ length: 8 }, (_, lane) => `grant-${lane}`)
        for (const grantId of lanes)
          yield* grants.start(
            {
              grant_id: grantId,
              client_id: "app",
              user_id: userId,
              scopes: ["openid", "offline_access"],
              resources: [],
              auth_time: 1,
              amr: ["pwd"],
              created_at: now,
              last_used_at: now,
              expires_at: later,
              revoked_at: null
            },
            Option.some(grantToken(`${grantId}-t1`, grantId))
          )
        const file = yield* fileOfClient
        yield* emptyLog(file)
        const outcomes = yield* Effect.all(
          lanes.map((grantId) => grants.rotate(`${grantId}-t1`, grantToken(`${grantId}-t2`, grantId), now)),
          { concurrency: "unbounded" }
        )
        expect(outcomes).toEqual(lanes.map(() => true))
        expect(commitsInLog(file)).toBe(1)
        const rotated = yield* grants.presented("grant-3-t1")
        expect(Option.map(rotated, ({ token }) => token.rotated_at !== null)).toEqual(Option.some(true))
        expect(Option.isSome(yield* grants.presented("grant-3-t2"))).toBe(true)
      })
    )
  )

  it.live("a rotation refused inside a group rolls back alone; the others of its group commit", () =>
    onFile(
      Effect.gen(function* () {
        const good = yield* session("grouped-good")
        const bad = yield* session("grouped-bad")
        yield* session("grouped-taken")
        const tokens = yield* RefreshTokenRepo
        const file = yield* fileOfClient
        yield* emptyLog(file)
        const [won, refused] = yield* Effect.all(
          [
            tokens.rotate(rotation("grouped-good", "grouped-good-2", good)),
            // The successor's digest is already stored: the insert breaks the key after the claim.
            Effect.either(tokens.rotate(rotation("grouped-bad", "grouped-taken", bad)))
          ],
          { concurrency: "unbounded" }
        )
        expect(commitsInLog(file)).toBe(1)
        expect(won).toBe(true)
        expect(refused).toMatchObject({ _tag: "Left", left: { _tag: "StoreUnavailableError" } })
        expect(Option.isSome(yield* rotatedAt("grouped-good"))).toBe(true)
        expect(Option.isSome(yield* tokens.findByDigest("grouped-good-2"))).toBe(true)
        expect(yield* rotatedAt("grouped-bad")).toEqual(Option.none())
      })
    )
  )

  it.live("a rotation whose caller gave up before its group was written is not written", () =>
    onFile(
      Effect.gen(function* () {
        const familyId = yield* session("given-up")
        const other = yield* session("given-up-other")
        const tokens = yield* RefreshTokenRepo
        const transaction = (yield* Transaction).transaction
        // A transaction of the client holds the permit, so the group waits for its turn.
        const holding = yield* Effect.fork(
          transaction(Effect.zipRight(tokens.revokeFamily(FamilyId.make(other), now), Effect.sleep("400 millis")))
        )
        yield* Effect.sleep("50 millis")
        const gaveUp = yield* Effect.either(
          tokens
            .rotate(rotation("given-up", "given-up-2", familyId))
            .pipe(Effect.provideService(StoreTimeout, Duration.millis(100)))
        )
        expect(gaveUp).toMatchObject({ _tag: "Left", left: { _tag: "StoreUnavailableError" } })
        yield* holding.await
        yield* Effect.sleep("50 millis")
        // The caller was told the store did not answer: its token must still be good, not spent.
        expect(yield* rotatedAt("given-up")).toEqual(Option.none())
        expect(yield* tokens.findByDigest("given-up-2")).toEqual(Option.none())
        expect(yield* tokens.rotate(rotation("given-up", "given-up-3", familyId))).toBe(true)
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
