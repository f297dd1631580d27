import { mkdtempSync, readdirSync, readlinkSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Option } from "effect"
import { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import { Readiness } from "../../application/Readiness.js"
import * as LogSync from "../../infrastructure/sql/logSync.js"
import { SqliteDirect } from "../../infrastructure/sql/SqliteDirect.js"
import { sqliteFileWithClient } from "../support/databases.js"
import { newUser, startFamily } from "../support/sessionRecords.js"

/**
 * The direct connection's commits are made durable by a sync of the log that runs off the event
 * loop: its connection commits without syncing (synchronous=NORMAL), and each group's members are
 * answered only once the log has been synced after their COMMIT.
 */

/** A sync of the log that the test ends: each call is recorded with the means to end it. */
const heldSync = () => {
  const calls: Array<{ readonly path: string; readonly end: (failure?: Error) => void }> = []
  const sync = (path: string) =>
    new Promise<void>((resolve, reject) => {
      calls.push({ path, end: (failure) => (failure === undefined ? resolve() : reject(failure)) })
    })
  return { calls, sync }
}

/** `count` turns of the event loop: time for every fiber that can run to run. */
const turns = (count: number) =>
  Effect.promise(async () => {
    for (let turn = 0; turn < count; turn++) await new Promise((resolve) => setImmediate(resolve))
  })

/** Turns of the event loop until `ready` holds; fails after a few hundred. */
const turnsUntil = (ready: () => boolean) =>
  Effect.tryPromise(async () => {
    for (let turn = 0; turn < 300 && !ready(); turn++) await new Promise((resolve) => setImmediate(resolve))
    if (!ready()) throw new Error("never ready")
  })

const setup = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const direct = Option.getOrThrow(yield* Effect.serviceOption(SqliteDirect))
  const user = yield* newUser("sync@example.com")
  const verify = direct.execute(sql`UPDATE users SET is_verified = 1 WHERE id = ${user.id}`)
  const promote = direct.execute(sql`UPDATE users SET is_superuser = 1 WHERE id = ${user.id}`)
  const committed = Effect.map(
    direct.read(sql<{ is_verified: number; is_superuser: number }>`SELECT is_verified, is_superuser FROM users`),
    (rows) => rows[0]
  )
  const [file] = yield* sql<{ readonly file: string }>`SELECT file FROM pragma_database_list WHERE name = 'main'`
  return { sql, direct, verify, promote, committed, file: file?.file ?? "" }
})

describe("the direct connection's log, synced off the event loop", () => {
  it.effect("commits without a sync of its own, while the main connection keeps synchronous=FULL", () =>
    Effect.gen(function* () {
      const { sql, direct } = yield* setup
      const [main] = yield* sql<{ readonly synchronous: number }>`PRAGMA synchronous`
      const [own] = yield* direct.connection.execute("PRAGMA synchronous", [], undefined)
      // 2 is FULL (a sync inside each COMMIT, on the event loop), 1 NORMAL.
      expect(main?.synchronous).toBe(2)
      expect(own).toEqual({ synchronous: 1 })
    }).pipe(Effect.provide(sqliteFileWithClient()))
  )

  const held = heldSync()
  it.live("answers a transaction only once the log it wrote is synced, and serves reads meanwhile", () =>
    Effect.gen(function* () {
      const { direct, verify, committed, file } = yield* setup
      const before = held.calls.length
      const transaction = yield* Effect.fork(direct.transaction(verify))
      yield* turnsUntil(() => held.calls.length > before)
      const call = held.calls[before]
      expect(call?.path).toBe(`${file}-wal`)
      // Committed, so visible to the hot reads, which run while the sync waits; not answered yet.
      expect(yield* committed).toEqual({ is_verified: 1, is_superuser: 0 })
      yield* turns(50)
      expect(Option.isNone(yield* Fiber.poll(transaction))).toBe(true)
      call?.end()
      yield* Fiber.join(transaction)
    }).pipe(Effect.provide(sqliteFileWithClient({}, held.sync)))
  )

  const grouped = heldSync()
  it.live("runs and commits the next groups while a sync waits, and answers them after one sync of their own", () =>
    Effect.gen(function* () {
      const { direct, verify, promote, committed } = yield* setup
      const before = grouped.calls.length
      const first = yield* Effect.fork(direct.transaction(verify))
      yield* turnsUntil(() => grouped.calls.length > before)
      // Two more groups, one after the other, while the first one's sync waits.
      const second = yield* Effect.fork(direct.transaction(promote))
      yield* turns(50)
      const third = yield* Effect.fork(direct.transaction(verify))
      yield* turns(50)
      // Both committed (the write lock was free), neither answered, and no second sync yet.
      expect(yield* committed).toEqual({ is_verified: 1, is_superuser: 1 })
      expect(grouped.calls.length).toBe(before + 1)
      grouped.calls[before]?.end()
      yield* Fiber.join(first)
      yield* turnsUntil(() => grouped.calls.length > before + 1)
      expect(Option.isNone(yield* Fiber.poll(second))).toBe(true)
      expect(Option.isNone(yield* Fiber.poll(third))).toBe(true)
      grouped.calls[before + 1]?.end()
      yield* Fiber.join(second)
      yield* Fiber.join(third)
      expect(grouped.calls.length).toBe(before + 2)
    }).pipe(Effect.provide(sqliteFileWithClient({}, grouped.sync)))
  )

  const failing = heldSync()
  it.live("fails the group's members when the sync fails, and every later group's and read", () =>
    Effect.gen(function* () {
      const { direct, verify, promote, committed } = yield* setup
      const before = failing.calls.length
      const refused = yield* Effect.fork(Effect.exit(direct.transaction(verify)))
      yield* turnsUntil(() => failing.calls.length > before)
      failing.calls[before]?.end(new Error("EIO: i/o error, fdatasync"))
      const exit = yield* Fiber.join(refused)
      expect(Exit.isFailure(exit) && String(exit.cause)).toContain("could not be synced")
      const later = yield* Effect.exit(direct.transaction(promote))
      expect(Exit.isFailure(later) && String(later.cause)).toContain("could not be synced")
      expect(failing.calls.length).toBe(before + 1)
      // Their writes were committed, but the file is no longer known to be durable: the reads
      // that depend on it refuse too, until a restart.
      const read = yield* Effect.exit(committed)
      expect(Exit.isFailure(read) && String(read.cause)).toContain("could not be synced")
    }).pipe(Effect.provide(sqliteFileWithClient({}, failing.sync)))
  )

  it.effect(
    "answers a session begun while the log cannot be synced as an unavailable store, and is no longer ready",
    () =>
      Effect.gen(function* () {
        const readiness = yield* Readiness
        const user = yield* newUser("unsynced@example.com")
        yield* readiness.check
        const refused = yield* Effect.flip(startFamily(user.id, "unsynced-family"))
        expect(refused._tag).toBe("StoreUnavailableError")
        expect(yield* Effect.flip(readiness.check)).toEqual(new StoreUnavailableError({ store: "database" }))
      }).pipe(
        Effect.provide(
          Readiness.Default.pipe(
            Layer.provideMerge(sqliteFileWithClient({}, () => Promise.reject(new Error("EIO: i/o error, fdatasync"))))
          )
        )
      )
  )

  /** How many of this process's descriptors are open on `path`. */
  const descriptorsOn = (path: string) =>
    readdirSync("/proc/self/fd").filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`) === path
      } catch {
        return false
      }
    }).length

  it.effect("syncs through one descriptor, opened once and closed with its scope; a missing file fails to open", () =>
    Effect.gen(function* () {
      const folder = mkdtempSync(join(tmpdir(), "portcullis-sync-"))
      const log = join(folder, "log")
      writeFileSync(log, "frames")
      yield* Effect.scoped(
        Effect.gen(function* () {
          const sync = yield* LogSync.keptDescriptor(log)
          expect(descriptorsOn(log)).toBe(1)
          yield* Effect.promise(sync)
          yield* Effect.promise(sync)
          expect(descriptorsOn(log)).toBe(1)
        })
      )
      expect(descriptorsOn(log)).toBe(0)
      const missing = yield* Effect.exit(Effect.scoped(LogSync.keptDescriptor(join(folder, "none"))))
      expect(Exit.isFailure(missing) && String(missing.cause)).toContain("could not be opened")
    })
  )

  it.effect(
    "keeps writing the one log file, through checkpoints that truncate it, while the connections are open",
    () =>
      Effect.gen(function* () {
        const { sql, direct, file } = yield* setup
        const log = `${file}-wal`
        const { ino } = statSync(log)
        const write = (role: string) =>
          direct.transaction(direct.execute(sql`INSERT INTO roles (name) VALUES (${role})`))
        for (let round = 0; round < 3; round++) {
          yield* write(`role-${round}`)
          yield* sql`PRAGMA wal_checkpoint(TRUNCATE)`
          expect(statSync(log).size).toBe(0)
        }
        yield* write("role-last")
        expect(statSync(log).size).toBeGreaterThan(0)
        expect(statSync(log).ino).toBe(ino)
      }).pipe(Effect.provide(sqliteFileWithClient()))
  )
})
