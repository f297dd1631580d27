import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as SqliteDatabase from "../../infrastructure/sql/SqliteDatabase.js"
import { quiet } from "../support/databases.js"

describe("the embedded database's durability", () => {
  it.effect(
    "a file database runs in WAL mode with synchronous=FULL, so an acknowledged commit survives a power loss",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [journal] = yield* sql<{ readonly journal_mode: string }>`PRAGMA journal_mode`
        const [sync] = yield* sql<{ readonly synchronous: number }>`PRAGMA synchronous`
        expect(journal?.journal_mode).toBe("wal")
        // 2 is FULL; NORMAL (1) may lose the last commits of a WAL database on power loss.
        expect(sync?.synchronous).toBe(2)
      }).pipe(
        Effect.provide(
          SqliteDatabase.layer(join(mkdtempSync(join(tmpdir(), "portcullis-durability-")), "db.sqlite")).pipe(
            Layer.provide(quiet)
          )
        )
      )
  )
})
