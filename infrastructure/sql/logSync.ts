import * as fs from "node:fs"
import { SqlError } from "@effect/sql/SqlError"
import { type Cause, Effect, Exit, type Scope } from "effect"
import * as Once from "./once.js"

/**
 * How the log is made durable: opened in a scope, the means to sync it (what it holds on the
 * disk) off the event loop.
 */
export type SyncLog = (path: string) => Effect.Effect<() => Promise<void>, SqlError, Scope.Scope>

/**
 * fdatasync on libuv's pool, through one descriptor kept open until the scope closes: opening and
 * closing the file around each sync cost the event loop three to four times the sync alone
 * (67–97 µs against 17–33, measured). The log stays the one file while the direct connection
 * that writes to it is open: SQLite removes it only when the last connection to the database
 * closes, and otherwise rewrites or truncates it in place (a test holds a checkpoint to that).
 */
export const keptDescriptor: SyncLog = (path) =>
  Effect.map(
    Effect.acquireRelease(
      Effect.async<number, SqlError>((resume) =>
        fs.open(path, "r", (error, fd) =>
          resume(
            error === null
              ? Effect.succeed(fd)
              : Effect.fail(new SqlError({ cause: error, message: "the database's log could not be opened" }))
          )
        )
      ),
      (fd) => Effect.async<void>((resume) => fs.close(fd, () => resume(Effect.void)))
    ),
    (fd) => () =>
      new Promise<void>((resolve, reject) => fs.fdatasync(fd, (error) => (error === null ? resolve() : reject(error))))
  )

/**
 * Makes the commits made so far durable with as few syncs as can do it. A sync covers every write
 * made to the file before it began, so those who ask while one is under way wait for the next,
 * which begins once it ends and is shared by all of them; one sync is under way at a time.
 *
 * Once a sync has failed, what the file holds is no longer known to be on the disk (a later sync
 * may succeed without the pages the failed one lost, and the commits asking for it may rest on
 * them): every later request fails the same way until the service restarts, when the database
 * recovers what the disk holds. PostgreSQL stops for the same reason; here the reads that depend
 * on the file refuse too (`lost`), so that readiness says so and the instance is replaced.
 */
export interface LogSync {
  /** Makes the commits made before it durable. */
  readonly durable: Effect.Effect<void, SqlError>
  /** Why the file is no longer known to be durable, once a sync has failed. */
  readonly lost: () => Cause.Cause<SqlError> | undefined
}

export const make = (sync: Effect.Effect<void, SqlError>): Effect.Effect<LogSync, never, Scope.Scope> =>
  Effect.map(Effect.scope, (scope) => {
    /** The next sync's callers, who asked after the one under way began. */
    let wanted: Once.Once<void, SqlError> | undefined
    let underWay = false
    /** Why the file is no longer known to be durable, once a sync has failed. */
    let lost: Cause.Cause<SqlError> | undefined

    const syncs: Effect.Effect<void> = Effect.suspend(() => {
      const callers = wanted
      wanted = undefined
      if (callers === undefined) {
        underWay = false
        return Effect.void
      }
      return Effect.flatMap(lost === undefined ? Effect.exit(sync) : Effect.succeed(Exit.failCause(lost)), (exit) => {
        if (Exit.isFailure(exit)) lost = exit.cause
        return Effect.zipRight(Once.done(callers, exit), syncs)
      })
    })

    const durable = Effect.suspend(() => {
      if (lost !== undefined) return Effect.failCause(lost)
      if (wanted === undefined) wanted = Once.make()
      const callers = wanted
      if (underWay) return Once.wait(callers)
      underWay = true
      // Forked from an uninterruptible caller, the syncs run to their end even while the service stops.
      return Effect.zipRight(Effect.forkIn(syncs, scope), Once.wait(callers))
    })
    return { durable, lost: () => lost }
  })
