import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect, Fiber, Layer, Option } from "effect"
import { StoreSpace } from "../../application/ports/StoreSpace.js"
import * as SqliteDatabase from "../../infrastructure/sql/SqliteDatabase.js"
import * as StoreSpaceSqlite from "../../infrastructure/sql/StoreSpaceSqlite.js"
import { quiet } from "../support/databases.js"

const freshFile = () => join(mkdtempSync(join(tmpdir(), "portcullis-space-")), "db.sqlite")

const onFile = (filename: string) =>
  StoreSpaceSqlite.layer(filename).pipe(Layer.provideMerge(SqliteDatabase.layer(filename)), Layer.provide(quiet))

/** A few megabytes of audit rows written, then deleted: free pages inside the file. */
const freedPagesOf = (rows: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const details = JSON.stringify({ padding: "x".repeat(2_000) })
    yield* sql.withTransaction(
      Effect.forEach(
        Array.from({ length: rows }, (_, n) => n),
        (n) =>
          sql`INSERT INTO audit_events (occurred_at, event_type, actor_kind, details) VALUES (${n}, 'account.locked', 'none', ${details})`,
        { discard: true }
      )
    )
    yield* sql`DELETE FROM audit_events`
  })

const freedPages = freedPagesOf(2_000)

/** The file's free pages, read on a connection of its own (a WAL reader sees each committed step). */
const freePagesOf = (filename: string) => {
  const db = new Database(filename, { readonly: true })
  try {
    return Number(db.pragma("freelist_count", { simple: true }))
  } finally {
    db.close()
  }
}

const autoVacuum = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ readonly auto_vacuum: number }>`PRAGMA auto_vacuum`, ([row]) => row?.auto_vacuum)
)

describe("the room deleted rows leave (StoreSpace)", () => {
  it.live("a new SQLite file gives the pages a sweep frees back after it (auto_vacuum=INCREMENTAL)", () =>
    Effect.gen(function* () {
      // 2 is INCREMENTAL.
      expect(yield* autoVacuum).toBe(2)
      yield* freedPages
      const size = Option.getOrThrow(yield* (yield* StoreSpace).reclaim("incremental"))
      expect(size.after).toBeLessThan(size.before / 2)
    }).pipe(Effect.provide(onFile(freshFile())))
  )

  it.live(
    "many free pages go back in steps of at most VACUUM_STEP_PAGES, each committed, the process free between them",
    () => {
      const filename = freshFile()
      return Effect.gen(function* () {
        yield* freedPagesOf(12_000)
        const start = freePagesOf(filename)
        expect(start).toBeGreaterThan(2 * StoreSpaceSqlite.VACUUM_STEP_PAGES)
        const seen = new Set<number>()
        const reclaiming = yield* Effect.fork((yield* StoreSpace).reclaim("incremental"))
        // Read while it runs: a reclaim in one statement would show only the start and the end.
        while (reclaiming.unsafePoll() === null) {
          seen.add(freePagesOf(filename))
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 1)))
        }
        const size = Option.getOrThrow(yield* Fiber.join(reclaiming))
        expect(size.after).toBeLessThan(size.before / 2)
        expect(freePagesOf(filename)).toBe(0)
        expect([...seen].filter((pages) => pages > 0 && pages < start).length).toBeGreaterThan(0)
      }).pipe(Effect.provide(onFile(filename)))
    }
  )

  it.live("a file made before keeps its pages until a full vacuum, which makes it incremental too", () => {
    const filename = freshFile()
    // A file as 0.1 made it: its tables created before auto_vacuum was asked for.
    const old = new Database(filename)
    old.exec("CREATE TABLE kept (n INTEGER)")
    old.close()
    return Effect.gen(function* () {
      expect(yield* autoVacuum).toBe(0)
      yield* freedPages
      const space = yield* StoreSpace
      const incremental = Option.getOrThrow(yield* space.reclaim("incremental"))
      expect(incremental.after).toBe(incremental.before)
      const full = Option.getOrThrow(yield* space.reclaim("full"))
      expect(full.after).toBeLessThan(full.before / 2)
      // Read on a connection opened after it: the client's keeps the mode it opened with.
      const reopened = new Database(filename, { readonly: true })
      expect(reopened.pragma("auto_vacuum", { simple: true })).toBe(2)
      reopened.close()
    }).pipe(Effect.provide(onFile(filename)))
  })
})
