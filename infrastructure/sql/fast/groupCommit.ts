import { SqlError } from "@effect/sql/SqlError"
import type Database from "better-sqlite3"
import { Deferred, Effect, Exit, FiberId, type Scope } from "effect"

/** Thrown by a group's `each` to roll its own writes back and answer `answer`, leaving the others'. */
export class RolledBack<A> extends Error {
  constructor(readonly answer: A) {
    super("rolled back")
  }
}

interface Waiting<I, A> {
  readonly item: I
  readonly done: Deferred.Deferred<A, SqlError>
  /** Its caller gave up (timed out, interrupted) before the group was written: it is not written. */
  abandoned: boolean
}

const failed = (cause: unknown, message: string) => Exit.fail(new SqlError({ cause, message }))

/**
 * Writes that arrive together, committed together: `each(item)` for every item that came while
 * the first of them waited for its turn, in ONE transaction (BEGIN IMMEDIATE … COMMIT) on the
 * adapter's own connection, so that the commit's sync to the disk (`synchronous=FULL`), which
 * blocks the event loop, is paid once for the group instead of once for each. Every caller is
 * answered only after that COMMIT has returned: what is acknowledged is on the disk.
 *
 * - Each item runs in a savepoint of its own (better-sqlite3 nests a transaction as one): an item
 *   that throws rolls back its own writes only, and its caller gets the failure (a SqlError), or
 *   `answer` when it threw `RolledBack`. A failed COMMIT fails every caller of the group.
 * - The group's turn is `permit`, held while it commits: the client's connection (`sql.reserve`),
 *   as a single write's is, so that no transaction of this process is open beside it. The first
 *   caller of a group takes it on a fiber of its own, so that a caller giving up does not strand
 *   the others; that fiber waits one turn of the event loop first, so that the requests read in
 *   this turn join its group.
 * - A caller that gives up before its group is written is left out of it (nothing of it is
 *   written); once written, its answer is simply not heard, as a single write's would be.
 */
export const groupCommits = <I, A, E>(
  permit: Effect.Effect<unknown, E, Scope.Scope>,
  db: Database.Database,
  each: (item: I) => A
) => {
  const one = db.transaction(each)
  const all = db.transaction((group: ReadonlyArray<Waiting<I, A>>) =>
    group.map((waiting): Exit.Exit<A, SqlError> | undefined => {
      if (waiting.abandoned) return undefined
      try {
        return Exit.succeed(one(waiting.item))
      } catch (error) {
        // Some failures (a full disk, an I/O error) end the whole transaction, not the savepoint:
        // then nothing of the group stays, and the group fails as one.
        if (!db.inTransaction) throw error
        return error instanceof RolledBack
          ? Exit.succeed(error.answer as A)
          : failed(error, "Failed to execute statement")
      }
    })
  )

  let queued: Array<Waiting<I, A>> = []
  const take = () => {
    const group = queued
    queued = []
    return group
  }
  const commitQueued = () => {
    const group = take()
    let outcomes: ReadonlyArray<Exit.Exit<A, SqlError> | undefined>
    try {
      outcomes = all.immediate(group)
    } catch (error) {
      const exit = failed(error, "Failed to commit")
      for (const waiting of group) Deferred.unsafeDone(waiting.done, exit)
      return
    }
    group.forEach((waiting, index) => {
      const outcome = outcomes[index]
      if (outcome !== undefined) Deferred.unsafeDone(waiting.done, outcome)
    })
  }
  const nextTurn = Effect.async<void>((resume) => {
    const turn = setImmediate(() => resume(Effect.void))
    return Effect.sync(() => clearImmediate(turn))
  })
  const lead = nextTurn.pipe(
    Effect.zipRight(Effect.scoped(Effect.zipRight(permit, Effect.sync(commitQueued)))),
    Effect.catchAllCause((cause) =>
      Effect.sync(() => {
        const exit = failed(cause, "Failed to take the connection")
        for (const waiting of take()) Deferred.unsafeDone(waiting.done, exit)
      })
    )
  )

  return (item: I): Effect.Effect<A, SqlError> =>
    Effect.suspend(() => {
      const waiting: Waiting<I, A> = { item, done: Deferred.unsafeMake(FiberId.none), abandoned: false }
      queued.push(waiting)
      const answer = Effect.onInterrupt(Deferred.await(waiting.done), () =>
        Effect.sync(() => {
          waiting.abandoned = true
        })
      )
      return queued.length === 1 ? Effect.zipRight(Effect.forkDaemon(lead), answer) : answer
    })
}
