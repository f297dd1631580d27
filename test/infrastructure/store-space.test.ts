import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect, Layer, Option } from "effect"
import { StoreSpace } from "../../application/ports/StoreSpace.js"
import * as SqliteDatabase from "../../infrastructure/sql/SqliteDatabase.js"
import * as StoreSpaceSqlite from "../../infrastructure/sql/StoreSpaceSqlite.js"
import { quiet } from "../support/databases.js"

const freshFile = () => join(mkdtempSync(join(tmpdir(), "portcullis-space-")), "db.sqlite")

const onFile = (filename: string) =>
  StoreSpaceSqlite.layer(filename).pipe(Layer.provideMerge(SqliteDatabase.layer(filename)), Layer.provide(quiet))

/** A few megabytes of audit rows written, then deleted: free pages inside the file. */
const freedPages = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const details = JSON.stringify({ padding: "x".repeat(2_000) })
  yield* sql.withTransaction(
    Effect.forEach(
      Array.from({ length: 2_000 }, (_, n) => n),
      (n) =>
        sql`INSERT INTO audit_events (occurred_at, event_type, actor_kind, details) VALUES (${n}, 'account.locked', 'none', ${details})`,
      { discard: true }
    )
  )
  yield* sql`DELETE FROM audit_events`
})

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
