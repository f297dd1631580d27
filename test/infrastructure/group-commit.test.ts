import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Deferred, Effect, Either, Exit } from "effect"
import { afterAll } from "vitest"
import { groupCommits, RolledBack } from "../../infrastructure/sql/fast/groupCommit.js"

/**
 * Writes committed as a group (infrastructure/sql/fast/groupCommit.ts) on a database of the
 * test's own: what each caller is told must be what is on the disk, whatever fails and however.
 */

const folder = mkdtempSync(join(tmpdir(), "portcullis-group-"))
afterAll(() => rmSync(folder, { recursive: true, force: true }))
let files = 0

const database = () => {
  const db = new Database(join(folder, `group-${files++}.db`))
  db.pragma("journal_mode = WAL")
  db.pragma("synchronous = FULL")
  db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
  return db
}

const stored = (db: Database.Database) =>
  (db.prepare("SELECT id FROM notes ORDER BY id").all() as Array<{ id: number }>).map((row) => row.id)

/** A group writing notes: a note `undo` rolls itself back and answers "undone". */
const notes = <E>(db: Database.Database, permit: Effect.Effect<unknown, E, never> = Effect.void) => {
  const insert = db.prepare("INSERT INTO notes (id, body) VALUES (?, ?)")
  return groupCommits(permit, db, (note: { readonly id: number; readonly body: string }) => {
    insert.run(note.id, note.body)
    if (note.body === "undo") throw new RolledBack("undone")
    return "written"
  })
}

describe("writes committed as a group", () => {
  it.live("answers each caller with its own outcome, after the one commit", () =>
    Effect.gen(function* () {
      const db = database()
      const write = notes(db)
      const outcomes = yield* Effect.all(
        [
          Effect.either(write({ id: 1, body: "a" })),
          Effect.either(write({ id: 2, body: "undo" })),
          // The key is taken by the first: this one fails alone.
          Effect.either(write({ id: 1, body: "again" })),
          Effect.either(write({ id: 3, body: "c" }))
        ],
        { concurrency: "unbounded" }
      )
      expect(outcomes.map((outcome) => (Either.isRight(outcome) ? outcome.right : outcome.left._tag))).toEqual([
        "written",
        "undone",
        "SqlError",
        "written"
      ])
      expect(stored(db)).toEqual([1, 3])
      // A caller alone later is answered too, in a group of its own.
      expect(yield* write({ id: 4, body: "d" })).toBe("written")
      expect(stored(db)).toEqual([1, 3, 4])
    })
  )

  it.live("a failure that ends the whole transaction (a full disk) fails every caller whose write is not kept", () =>
    Effect.gen(function* () {
      const db = database()
      // The file may not grow: a note too big for the free pages is SQLITE_FULL.
      db.pragma(`max_page_count = ${db.pragma("page_count", { simple: true })}`)
      const write = notes(db)
      const outcomes = yield* Effect.all(
        [
          Effect.either(write({ id: 1, body: "small" })),
          Effect.either(write({ id: 2, body: "x".repeat(200_000) })),
          Effect.either(write({ id: 3, body: "small" }))
        ],
        { concurrency: "unbounded" }
      )
      const kept = stored(db)
      // Told "written" exactly when the note is on the disk, whichever way SQLite ended it.
      outcomes.forEach((outcome, index) => {
        expect(Either.isRight(outcome), `note ${index + 1}`).toBe(kept.includes(index + 1))
      })
      expect(Either.isLeft(outcomes[1] ?? Either.right(""))).toBe(true)
      expect(db.inTransaction).toBe(false)
    })
  )

  it.live("a caller that gives up while its group waits for its turn is left out of it", () =>
    Effect.gen(function* () {
      const db = database()
      const turn = yield* Deferred.make<void>()
      const write = notes(db, Deferred.await(turn))
      const gaveUp = yield* Effect.exit(write({ id: 1, body: "a" }).pipe(Effect.timeout("100 millis")))
      expect(Exit.isFailure(gaveUp)).toBe(true)
      const waiting = yield* Effect.fork(write({ id: 2, body: "b" }))
      yield* Deferred.succeed(turn, undefined)
      expect(yield* waiting.await).toEqual(Exit.succeed("written"))
      expect(stored(db)).toEqual([2])
    })
  )

  it.live("a turn that cannot be had fails every caller of the group, and writes nothing", () =>
    Effect.gen(function* () {
      const db = database()
      const write = notes(db, Effect.fail("no connection"))
      const outcomes = yield* Effect.all(
        [Effect.flip(write({ id: 1, body: "a" })), Effect.flip(write({ id: 2, body: "b" }))],
        { concurrency: "unbounded" }
      )
      for (const outcome of outcomes) expect(outcome).toBeInstanceOf(SqlError)
      expect(stored(db)).toEqual([])
    })
  )
})
