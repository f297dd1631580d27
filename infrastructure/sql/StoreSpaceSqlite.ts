import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import Database from "better-sqlite3"
import { Effect, Layer, Option } from "effect"
import { StoreSpace } from "../../application/ports/StoreSpace.js"
import { unavailable } from "./failures.js"

/** The file's size from its own header: pages times their size. */
const size = (db: Database.Database) =>
  Number(db.pragma("page_count", { simple: true })) * Number(db.pragma("page_size", { simple: true }))

/**
 * A SQLite file gives back what it no longer uses: `PRAGMA incremental_vacuum` frees the pages
 * auto_vacuum=INCREMENTAL (new files, SqliteDatabase.prepare) keeps track of; VACUUM rewrites the
 * file, after which an older file is incremental too.
 *
 * On a connection opened for the call, where `exec` runs the pragma to its end: it frees one page
 * a step, and the client's statements take one step. The client's connection is held meanwhile,
 * so that no transaction of this process is open beside it.
 */
export const layer = (filename: string) =>
  Layer.effect(
    StoreSpace,
    Effect.map(SqlClient.SqlClient, (sql) =>
      StoreSpace.of({
        reclaim: (mode) =>
          Effect.scoped(
            Effect.zipRight(
              sql.reserve,
              Effect.try({
                try: () => {
                  const db = new Database(filename, { fileMustExist: true })
                  try {
                    db.pragma("busy_timeout = 5000")
                    const before = size(db)
                    // auto_vacuum changes only with the rewrite that follows it.
                    db.exec(mode === "full" ? "PRAGMA auto_vacuum = INCREMENTAL; VACUUM" : "PRAGMA incremental_vacuum")
                    return Option.some({ before, after: size(db) })
                  } finally {
                    db.close()
                  }
                },
                catch: (cause) => new SqlError({ cause, message: "Failed to give free pages back" })
              })
            )
          ).pipe(unavailable)
      })
    )
  )
