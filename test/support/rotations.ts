import { readFileSync } from "node:fs"
import * as SqlClient from "@effect/sql/SqlClient"
import { DateTime, type Duration, Effect, Option } from "effect"
import { expect } from "vitest"
import type { AuthorizationCodes } from "../../application/ports/AuthorizationCodes.js"
import type { OidcClients } from "../../application/ports/OidcClients.js"
import type { OidcGrants } from "../../application/ports/OidcGrants.js"
import { RefreshTokenRepo, type Rotation } from "../../application/ports/RefreshTokenRepo.js"
import { Transaction } from "../../application/ports/Transaction.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { sqliteFileAdapters } from "../../composition/stores.js"
import { FamilyId, StoredRefreshToken, TokenFamily } from "../../domain/Session.js"
import { Email } from "../../domain/User.js"
import { open } from "../../infrastructure/sql/fast/connections.js"
import { sqliteFileWithClient } from "./databases.js"

/** What the tests of the fast rotations (test/infrastructure/fast-rotation, grouped-rotations) share. */

export const now = DateTime.unsafeMake(Date.UTC(2033, 2, 3, 4, 5, 6, 789))
export const later = DateTime.addDuration(now, "30 days")

export const token = (digest: string, familyId: string) =>
  new StoredRefreshToken({
    digest,
    family_id: FamilyId.make(familyId),
    issued_at: now,
    expires_at: later,
    rotated_at: Option.none(),
    sealed_successor: Option.none()
  })

/** A user with one session whose first token's digest is `first`. */
export const session = (first: string) =>
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

export const rotation = (presented: string, successor: string, familyId: string): Rotation => ({
  presented,
  successor: token(successor, familyId),
  sealedSuccessor: Option.none(),
  now
})

export const rotatedAt = (digest: string) =>
  Effect.map(
    Effect.flatMap(RefreshTokenRepo, (tokens) => tokens.findByDigest(digest)),
    (found) => Option.flatMap(found, ({ token }) => token.rotated_at)
  )

/** The file the client has open. */
export const fileOfClient = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ readonly file: string }>`SELECT file FROM pragma_database_list`, (rows) => rows[0]?.file ?? "")
)

/** Empties the file's write-ahead log into the file, so that the log holds only what comes next. */
export const emptyLog = (file: string) =>
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
export const commitsInLog = (file: string) => {
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

export const onFile = <A, E>(
  effect: Effect.Effect<
    A,
    E,
    RefreshTokenRepo | UserRepo | Transaction | SqlClient.SqlClient | OidcGrants | OidcClients | AuthorizationCodes
  >
) => effect.pipe(Effect.provide(sqliteFileWithClient({}, sqliteFileAdapters)))

/**
 * A transaction of the client that writes first (ending the session `familyId`, so taking SQLite's
 * write lock and the client's permit) and then waits `held`, as a use case's transaction may
 * between its statements; forked, the fiber to await.
 */
export const holdingWriteLock = (familyId: string, held: Duration.DurationInput) =>
  Effect.gen(function* () {
    const tokens = yield* RefreshTokenRepo
    const { transaction } = yield* Transaction
    return yield* Effect.fork(
      transaction(Effect.zipRight(tokens.revokeFamily(FamilyId.make(familyId), now), Effect.sleep(held)))
    )
  })
