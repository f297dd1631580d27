import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Deferred, Effect, Exit, Fiber, Option } from "effect"
import { SqliteDirect } from "../../infrastructure/sql/SqliteDirect.js"
import { sqliteFileWithClient } from "../support/databases.js"
import { newUser } from "../support/sessionRecords.js"

/**
 * The direct connection's transactions share their COMMIT: those begun in one turn of the event
 * loop are savepoints of one transaction, and each is answered, success or failure, only once
 * that transaction's COMMIT has returned.
 */

type Flag = "is_verified" | "is_superuser" | "is_active"

const setup = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const direct = Option.getOrThrow(yield* Effect.serviceOption(SqliteDirect))
  const user = yield* newUser("group@example.com")
  const set = (flag: Flag, value: 0 | 1 = 1) =>
    direct.execute(sql`UPDATE users SET ${sql(flag)} = ${value} WHERE id = ${user.id}`)
  /** The user's flags as `execute` reads them: committed, or as the open transaction has them. */
  const flagsOn = (execute: typeof direct.read) =>
    Effect.map(
      execute(sql<Record<Flag, number>>`SELECT is_verified, is_superuser, is_active FROM users WHERE id = ${user.id}`),
      (rows) => rows[0]
    )
  /** Another process's connection to the same file, closed with the test's scope. */
  const otherProcess = Effect.acquireRelease(
    Effect.map(
      sql<{ readonly file: string }>`SELECT file FROM pragma_database_list WHERE name = 'main'`,
      (files) => new Database(files[0]?.file ?? "")
    ),
    (other) => Effect.sync(() => other.close())
  )
  return { sql, direct, set, otherProcess, committed: flagsOn(direct.read), uncommitted: flagsOn(direct.execute) }
})

/** "committed", or the failure as its text. */
const outcomeOf = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.match(exit, { onSuccess: () => "committed", onFailure: (cause) => cause.toString() })

describe("the group commit of the direct connection", () => {
  it.effect("runs the transactions begun in one turn in one, each seeing the writes of those before it", () =>
    Effect.gen(function* () {
      const { direct, set, committed, uncommitted } = yield* setup
      const opening = yield* Effect.fork(direct.transaction(Effect.zipRight(set("is_verified"), committed)))
      // Other fibers run meanwhile, the COMMIT's among them; the event loop has not turned.
      for (let round = 0; round < 3; round++) yield* Effect.yieldNow()
      const second = yield* direct.transaction(
        Effect.zipRight(set("is_superuser"), Effect.all([committed, uncommitted]))
      )
      const first = yield* Fiber.join(opening)
      // Neither write was committed while the second ran, yet it saw the first's: one transaction.
      expect(first).toEqual({ is_verified: 0, is_superuser: 0, is_active: 1 })
      expect(second).toEqual([
        { is_verified: 0, is_superuser: 0, is_active: 1 },
        { is_verified: 1, is_superuser: 1, is_active: 1 }
      ])
      expect(yield* committed).toEqual({ is_verified: 1, is_superuser: 1, is_active: 1 })
    }).pipe(Effect.provide(sqliteFileWithClient()))
  )

  it.scoped("holds the file's write lock while its members run and commit, not while they wait for their turn", () =>
    Effect.gen(function* () {
      const { direct, set, otherProcess, committed } = yield* setup
      // Another process writing to the same file, which would be refused at once if it had to wait.
      const other = yield* otherProcess
      other.pragma("busy_timeout = 0")
      const queued = yield* Effect.fork(direct.transaction(set("is_verified")))
      yield* Effect.yieldNow()
      other.prepare("UPDATE users SET is_superuser = 1").run()
      yield* Fiber.join(queued)
      expect(yield* committed).toEqual({ is_verified: 1, is_superuser: 1, is_active: 1 })
    }).pipe(Effect.provide(sqliteFileWithClient()))
  )

  it.scoped("fails the members of a group that cannot begin, and lets go of the main connection", () =>
    Effect.gen(function* () {
      const { sql, direct, set, otherProcess, committed } = yield* setup
      // Another process holds the file's write lock for longer than the group waits for it.
      const other = yield* otherProcess
      other.exec("BEGIN IMMEDIATE")
      yield* direct.execute(sql`PRAGMA busy_timeout = 20`)
      const exits = yield* Effect.all(
        [Effect.exit(direct.transaction(set("is_verified"))), Effect.exit(direct.transaction(set("is_superuser")))],
        { concurrency: "unbounded" }
      )
      other.exec("ROLLBACK")
      expect(exits.map(outcomeOf)).toEqual([expect.stringContaining("SqlError"), expect.stringContaining("SqlError")])
      yield* sql`UPDATE users SET is_active = 0`
      yield* direct.transaction(set("is_verified"))
      expect(yield* committed).toEqual({ is_verified: 1, is_superuser: 0, is_active: 0 })
    }).pipe(Effect.provide(sqliteFileWithClient()))
  )

  it.effect("answers a member only once its writes are committed", () =>
    Effect.gen(function* () {
      const { direct, set, committed } = yield* setup
      const seen: Array<unknown> = []
      const answered = (effect: Effect.Effect<unknown, unknown>) =>
        Effect.tap(direct.transaction(effect), () => Effect.map(committed, (flags) => seen.push(flags)))
      yield* Effect.all([answered(set("is_verified")), answered(set("is_superuser"))], { concurrency: "unbounded" })
      expect(seen).toEqual([
        { is_verified: 1, is_superuser: 1, is_active: 1 },
        { is_verified: 1, is_superuser: 1, is_active: 1 }
      ])
    }).pipe(Effect.provide(sqliteFileWithClient()))
  )

  it.effect("rolls back a member whose work fails, alone: the others in its group commit", () =>
    Effect.gen(function* () {
      const { direct, set, committed } = yield* setup
      const exits = yield* Effect.all(
        [
          Effect.exit(direct.transaction(set("is_verified"))),
          Effect.exit(direct.transaction(Effect.zipRight(set("is_superuser"), Effect.fail("refused" as const)))),
          Effect.exit(direct.transaction(set("is_active", 0)))
        ],
        { concurrency: "unbounded" }
      )
      expect(exits.map(Exit.isSuccess)).toEqual([true, false, true])
      expect(exits[1]).toEqual(Exit.fail("refused"))
      expect(yield* committed).toEqual({ is_verified: 1, is_superuser: 0, is_active: 0 })
    }).pipe(Effect.provide(sqliteFileWithClient()))
  )

  it.effect("fails every member when the COMMIT fails, keeps none of their writes, and takes the next one", () =>
    Effect.gen(function* () {
      const { sql, direct, set, committed } = yield* setup
      // A foreign key checked at COMMIT: the second member's token names no family.
      const orphan = Effect.zipRight(
        direct.execute(sql`PRAGMA defer_foreign_keys = ON`),
        direct.execute(sql`INSERT INTO refresh_tokens (digest, family_id, issued_at, expires_at)
          VALUES ('orphan', 'no-such-family', 0, 1)`)
      )
      const exits = yield* Effect.all(
        [Effect.exit(direct.transaction(set("is_verified"))), Effect.exit(direct.transaction(orphan))],
        { concurrency: "unbounded" }
      )
      expect(exits.map(outcomeOf)).toEqual([expect.stringContaining("SqlError"), expect.stringContaining("SqlError")])
      expect(yield* committed).toEqual({ is_verified: 0, is_superuser: 0, is_active: 1 })
      expect(yield* direct.read(sql`SELECT digest FROM refresh_tokens WHERE digest = 'orphan'`)).toEqual([])
      yield* direct.transaction(set("is_superuser"))
      expect(yield* committed).toEqual({ is_verified: 0, is_superuser: 1, is_active: 1 })
    }).pipe(Effect.provide(sqliteFileWithClient()))
  )

  it.effect("keeps a newcomer out of a group SQLite has ended by itself: it runs in the next one", () =>
    Effect.gen(function* () {
      const { sql, direct, set, committed } = yield* setup
      // As SQLite does after some failures (a full disk): the whole transaction is rolled back.
      const ended = Effect.zipRight(set("is_verified"), direct.execute(sql`ROLLBACK`))
      const [first, second] = yield* Effect.all(
        [Effect.exit(direct.transaction(ended)), Effect.exit(direct.transaction(set("is_superuser")))],
        { concurrency: "unbounded" }
      )
      expect([Exit.isFailure(first), Exit.isSuccess(second)]).toEqual([true, true])
      expect(yield* committed).toEqual({ is_verified: 0, is_superuser: 1, is_active: 1 })
    }).pipe(Effect.provide(sqliteFileWithClient()))
  )

  it.live("lets a transaction begun while a group runs join the next group", () =>
    Effect.gen(function* () {
      const { direct, set, committed } = yield* setup
      const release = yield* Deferred.make<void>()
      // The first member's work holds its group running across turns.
      const first = yield* Effect.fork(direct.transaction(Effect.zipRight(set("is_verified"), Deferred.await(release))))
      yield* Effect.sleep("20 millis")
      const late = yield* Effect.fork(direct.transaction(Effect.zipRight(set("is_superuser"), committed)))
      yield* Effect.sleep("20 millis")
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(first)
      // When the newcomer ran, the first's write was already committed: it was not in that group.
      expect(yield* Fiber.join(late)).toEqual({ is_verified: 1, is_superuser: 0, is_active: 1 })
      expect(yield* committed).toEqual({ is_verified: 1, is_superuser: 1, is_active: 1 })
    }).pipe(Effect.provide(sqliteFileWithClient()))
  )

  it.live("undoes an interrupted member alone, and lets the one waiting behind it run and commit", () =>
    Effect.gen(function* () {
      const { direct, set, committed } = yield* setup
      const opened = yield* Deferred.make<void>()
      const stuck = yield* Effect.fork(
        direct.transaction(
          Effect.zipRight(set("is_verified"), Effect.zipRight(Deferred.succeed(opened, undefined), Effect.never))
        )
      )
      yield* Deferred.await(opened)
      const waiting = yield* Effect.fork(direct.transaction(set("is_superuser")))
      const given = yield* Effect.fork(direct.transaction(set("is_active", 0)))
      yield* Effect.sleep("20 millis")
      yield* Fiber.interrupt(given)
      yield* Fiber.interrupt(stuck)
      yield* Fiber.join(waiting)
      expect(yield* committed).toEqual({ is_verified: 0, is_superuser: 1, is_active: 1 })
      // Nothing is left held: the next transaction runs and commits.
      yield* direct.transaction(set("is_verified"))
      expect(yield* committed).toEqual({ is_verified: 1, is_superuser: 1, is_active: 1 })
    }).pipe(Effect.provide(sqliteFileWithClient()))
  )

  it.live("fails the members whose groups could not commit before the database closed", () =>
    Effect.gen(function* () {
      const opened = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const outcomes: Array<Deferred.Deferred<Exit.Exit<unknown, unknown>>> = []
      /** `effect` as a transaction of its own fiber, outliving the database's layer; its outcome kept. */
      const outliving = (direct: SqliteDirect["Type"], effect: Effect.Effect<unknown, unknown>) =>
        Effect.gen(function* () {
          const outcome = yield* Deferred.make<Exit.Exit<unknown, unknown>>()
          outcomes.push(outcome)
          yield* Effect.forkDaemon(
            Effect.flatMap(Effect.exit(direct.transaction(effect)), (exit) => Deferred.succeed(outcome, exit))
          )
        })
      // The database's layer closes while one member's work holds its group open, and another
      // member waits for the next group.
      yield* Effect.gen(function* () {
        const { direct, set } = yield* setup
        yield* outliving(
          direct,
          Effect.zipRight(
            set("is_verified"),
            Effect.zipRight(Deferred.succeed(opened, undefined), Deferred.await(release))
          )
        )
        yield* Deferred.await(opened)
        yield* outliving(direct, set("is_superuser"))
        yield* Effect.sleep("20 millis")
      }).pipe(Effect.provide(sqliteFileWithClient()))
      yield* Deferred.succeed(release, undefined)
      const exits = yield* Effect.forEach(outcomes, Deferred.await)
      expect(exits.map(outcomeOf)).toEqual([
        expect.stringContaining("the database closed before the commit"),
        expect.stringContaining("the database closed before the commit")
      ])
    })
  )
})
