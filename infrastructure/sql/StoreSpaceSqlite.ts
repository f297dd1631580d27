import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import Database from "better-sqlite3"
import { Duration, Effect, Layer, Option } from "effect"
import { StoreSpace } from "../../application/ports/StoreSpace.js"
import { nextBatchSize } from "../../domain/Retention.js"
import { unavailable } from "./failures.js"

/** The file's size from its own header: pages times their size. */
const size = (db: Database.Database) =>
  Number(db.pragma("page_count", { simple: true })) * Number(db.pragma("page_size", { simple: true }))

/** Pages one step of `incremental_vacuum` moves at most: a step holds the file, and the event loop. */
export const VACUUM_STEP_PAGES = 2_048

/**
 * Pages of the first step: what a page costs differs with the file (a large one's pages are
 * moved from further off), so steps start small and grow while they are quick.
 */
export const VACUUM_FIRST_STEP_PAGES = 128

/** The pause after a step, as long as it took: the process's requests, and other processes, go meanwhile. */
const rest = (millis: number) =>
  Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, Math.ceil(millis))))

/**
 * A SQLite file gives back what it no longer uses: `PRAGMA incremental_vacuum` frees the pages
 * auto_vacuum=INCREMENTAL (new files, SqliteDatabase.prepare) keeps track of; VACUUM rewrites the
 * file, after which an older file is incremental too.
 *
 * On a connection opened for each step, where `exec` runs the pragma to its end: it frees one page
 * a step, and the client's statements take one step. The client's connection is held meanwhile,
 * so that no transaction of this process is open beside it. The incremental one goes at most
 * VACUUM_STEP_PAGES a step, starting at VACUUM_FIRST_STEP_PAGES and growing while a step takes
 * under a quarter of BATCH_BUDGET_MILLIS (shrinking while one overruns it), resting between
 * steps: after a sweep of a year's backlog, freeing a couple of gigabytes in one statement held a
 * serving process for most of a minute.
 */
export const layer = (filename: string) =>
  Layer.effect(
    StoreSpace,
    Effect.map(SqlClient.SqlClient, (sql) => {
      /** `use` on a connection of its own to the file, while the client's is held. */
      const onFile = <A>(use: (db: Database.Database) => A) =>
        Effect.scoped(
          Effect.zipRight(
            sql.reserve,
            Effect.try({
              try: () => {
                const db = new Database(filename, { fileMustExist: true })
                try {
                  db.pragma("busy_timeout = 5000")
                  return use(db)
                } finally {
                  db.close()
                }
              },
              catch: (cause) => new SqlError({ cause, message: "Failed to give free pages back" })
            })
          )
        )
      // auto_vacuum changes only with the rewrite that follows it.
      const full = onFile((db) => {
        const before = size(db)
        db.exec("PRAGMA auto_vacuum = INCREMENTAL; VACUUM")
        return { before, after: size(db) }
      })
      const incremental = Effect.gen(function* () {
        const before = yield* onFile(size)
        let pages = VACUUM_FIRST_STEP_PAGES
        for (;;) {
          const [elapsed, left] = yield* Effect.timed(
            onFile((db) => {
              db.exec(`PRAGMA incremental_vacuum(${pages})`)
              // An older file (auto_vacuum off) frees nothing: its pages wait for a full vacuum.
              return Number(db.pragma("auto_vacuum", { simple: true })) === 0
                ? 0
                : Number(db.pragma("freelist_count", { simple: true }))
            })
          )
          if (left === 0) break
          pages = nextBatchSize(pages, Duration.toMillis(elapsed), VACUUM_STEP_PAGES)
          yield* rest(Duration.toMillis(elapsed))
        }
        return { before, after: yield* onFile(size) }
      })
      return StoreSpace.of({
        reclaim: (mode) => (mode === "full" ? full : incremental).pipe(Effect.map(Option.some), unavailable)
      })
    })
  )
