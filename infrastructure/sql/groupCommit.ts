import { SqlError } from "@effect/sql/SqlError"
import { Deferred, Effect, Exit, Scope } from "effect"

/**
 * Transactions that share their COMMIT. On SQLite with `synchronous = FULL` a COMMIT is a sync of
 * the log, and it costs a refresh or a sign-in more than all its statements together; the
 * connection is synchronous, so while one syncs nothing else runs anyway. Here the first
 * transaction opens a shared one (a group), every transaction begun before the event loop's next
 * turn joins it as a savepoint of its own, and one COMMIT at that turn makes them all durable.
 *
 * What each member is told is what one transaction of its own would have told it:
 * - its work runs alone (one member at a time, its savepoint released or rolled back before the
 *   next one starts), so a member sees the writes of those before it, as it would once they had
 *   committed;
 * - a member whose work fails is rolled back to its savepoint, and the others keep theirs;
 * - no member is answered before the group's COMMIT has returned: not its success, which would
 *   not be durable yet, nor its failure, which may rest on a write that the COMMIT could still
 *   lose. A COMMIT that fails is every member's failure, and the group is rolled back.
 * Once the COMMIT is under way, a newcomer waits for it to settle and joins the next group.
 */
export interface GroupCommit {
  /** `effect` as a member of the open group, or of a new one; answered once the group has settled. */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SqlError, R>
}

export interface Options {
  /** Begins the shared transaction, holding what it takes (the main connection) until the scope closes. */
  readonly begin: Effect.Effect<void, SqlError, Scope.Scope>
  readonly commit: Effect.Effect<void, SqlError>
  /** Ends a shared transaction whose COMMIT failed. */
  readonly rollback: Effect.Effect<void>
  /** `effect` as a savepoint of the shared transaction: released, or rolled back when it fails. */
  readonly member: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SqlError, R>
  /** Whether the shared transaction is still open: SQLite ends one by itself after some failures. */
  readonly isOpen: () => boolean
}

interface Group {
  readonly scope: Scope.CloseableScope
  /** Completed once the COMMIT (or the rollback after it failed) is done and the scope closed. */
  readonly settled: Deferred.Deferred<void, SqlError>
  closing: boolean
}

type Restore = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/** One turn of the event loop: requests read from the sockets meanwhile begin their transactions. */
const nextTurn = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

export const make = (options: Options): Effect.Effect<GroupCommit, never, Scope.Scope> =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    // Held by a member while its work runs, and by the COMMIT.
    const lock = yield* Effect.makeSemaphore(1)
    let current: Group | undefined

    // A member waits for this uninterruptibly, so it always settles the group: by its COMMIT, or,
    // when the service shuts down before the COMMIT could run, as a failure (nothing committed).
    const settle = (group: Group) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.matchCauseEffect(
          restore(
            nextTurn.pipe(
              Effect.tap(() => {
                group.closing = true
              }),
              Effect.zipRight(lock.take(1))
            )
          ),
          {
            onFailure: () => {
              if (current === group) current = undefined
              return Effect.zipRight(
                Scope.close(group.scope, Exit.void),
                Deferred.fail(group.settled, new SqlError({ message: "the database closed before the commit" }))
              )
            },
            onSuccess: () =>
              Effect.gen(function* () {
                current = undefined
                const committed = yield* Effect.exit(options.commit)
                if (Exit.isFailure(committed)) yield* options.rollback
                yield* Scope.close(group.scope, Exit.void)
                yield* lock.release(1)
                yield* Deferred.done(group.settled, committed)
              })
          }
        )
      ).pipe(
        // The member that forks it is itself uninterruptible there, and a fork inherits that.
        Effect.interruptible,
        Effect.forkIn(scope)
      )

    const open = (restore: Restore): Effect.Effect<Group, SqlError> =>
      Effect.gen(function* () {
        const groupScope = yield* Scope.make()
        const begun = yield* Effect.exit(restore(Scope.extend(options.begin, groupScope)))
        if (Exit.isFailure(begun)) {
          yield* Scope.close(groupScope, begun)
          return yield* Effect.failCause(begun.cause)
        }
        const group: Group = { scope: groupScope, settled: yield* Deferred.make<void, SqlError>(), closing: false }
        current = group
        yield* settle(group)
        return group
      })

    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
      Effect.uninterruptibleMask((restore) => {
        const join: Effect.Effect<A, E | SqlError, R> = Effect.zipRight(
          restore(lock.take(1)),
          Effect.suspend(() => {
            const group = current
            if (group !== undefined && (group.closing || !options.isOpen())) {
              return lock
                .release(1)
                .pipe(Effect.zipRight(restore(Effect.ignore(Deferred.await(group.settled)))), Effect.zipRight(join))
            }
            const worked = Effect.flatMap(group === undefined ? open(restore) : Effect.succeed(group), (joined) =>
              Effect.map(Effect.exit(options.member(restore(effect))), (exit) => [joined, exit] as const)
            )
            return Effect.flatMap(Effect.ensuring(worked, lock.release(1)), ([joined, exit]) =>
              Effect.zipRight(Deferred.await(joined.settled), exit)
            )
          })
        )
        return join
      })

    return { transaction }
  })
