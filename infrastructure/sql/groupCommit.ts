import { SqlError } from "@effect/sql/SqlError"
import { Cause, Effect, Exit, Option, Scope } from "effect"
import * as Once from "./once.js"

/**
 * Transactions that share their COMMIT. On SQLite a durable COMMIT is a sync of the log, and it
 * costs a refresh or a sign-in more than all its statements together. Here a transaction
 * waits for the event loop's next turn, and every transaction begun until then (the requests
 * read from the sockets meanwhile) runs with it, one after another, each as a savepoint of one
 * shared transaction (a group), which one COMMIT and a sync (`durable` below) then make durable.
 * The sync waits outside the write lock: the transactions begun meanwhile make the next group,
 * which runs and commits while it waits. The group begins only when
 * its members are ready to run, so it holds the database's write lock for their statements and
 * its COMMIT only: another process writing to the same file waits no longer than it would for
 * one transaction of each.
 *
 * What each member is told is what one transaction of its own would have told it:
 * - its work runs alone (its savepoint released or rolled back before the next member starts),
 *   so a member sees the writes of those before it, as it would once they had committed;
 * - a member whose work fails is rolled back to its savepoint, and the others keep theirs;
 * - no member is answered before the group's COMMIT has returned: not its success, which would
 *   not be durable yet, nor its failure, which may rest on a write that the COMMIT could still
 *   lose. A COMMIT that fails is every member's failure, and the group is rolled back; so is a
 *   sync that fails after it, though the writes stay (visible, and not known to be on the disk).
 *   A member of a later group, which may have read them, is answered only after a later sync.
 * A transaction begun while a group runs joins the next one.
 */
export interface GroupCommit {
  /** `effect` as a member of the next group; answered once that group has settled. */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SqlError, R>
}

export interface Options {
  /** Begins the shared transaction, holding what it takes (the main connection) until the scope closes. */
  readonly begin: Effect.Effect<void, SqlError, Scope.Scope>
  readonly commit: Effect.Effect<void, SqlError>
  /**
   * Makes what was committed before it durable: run once the group has let go of the write lock,
   * so that the next group runs and commits while it waits. The members are answered after it.
   */
  readonly durable: Effect.Effect<void, SqlError>
  /** Ends a shared transaction whose COMMIT failed. */
  readonly rollback: Effect.Effect<void>
  /** `effect` as a savepoint of the shared transaction: released, or rolled back when it fails. */
  readonly member: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SqlError, R>
  /** Whether the shared transaction is still open: SQLite ends one by itself after some failures. */
  readonly isOpen: () => boolean
}

interface Group {
  /** Completed once the COMMIT (or the rollback after it failed) is done. */
  readonly settled: Once.Once<void, SqlError>
}

/** A transaction waiting for its group. */
interface Ticket {
  /** Its group, once its turn to run has come; a failure when no group could take it. */
  readonly turn: Once.Once<Group, SqlError>
  /** Its work is over: its savepoint released or rolled back, or it gave up before its turn. */
  readonly done: Once.Once<void>
  cancelled: boolean
}

/** One turn of the event loop: requests read from the sockets meanwhile begin their transactions. */
const nextTurn = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

const closed = new SqlError({ message: "the database closed before the commit" })

export const make = (options: Options): Effect.Effect<GroupCommit, never, Scope.Scope> =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    let waiting: Array<Ticket> = []
    let running = false

    const refuse = (tickets: ReadonlyArray<Ticket>, error: SqlError) =>
      Effect.sync(() => {
        for (const ticket of tickets) Once.unsafeDone(ticket.turn, Exit.fail(error))
      })

    /**
     * The tickets' turns, one after another, in the shared transaction. Answers those it could not
     * run because SQLite ended the transaction meanwhile: they go to the next group.
     */
    const runTurns = (tickets: ReadonlyArray<Ticket>, group: Group) =>
      Effect.gen(function* () {
        for (const [index, ticket] of tickets.entries()) {
          if (ticket.cancelled) continue
          if (!options.isOpen()) return tickets.slice(index)
          Once.unsafeDone(ticket.turn, Exit.succeed(group))
          yield* Once.wait(ticket.done)
        }
        return []
      })

    // Forked in the layer's scope. Interrupted (the service shutting down) while its members wait
    // or work, it commits nothing: they are failed, and the connection's close rolls back.
    const runGroup: Effect.Effect<void> = Effect.uninterruptibleMask((restore) =>
      Effect.gen(function* () {
        // Interrupted here, the tickets stay waiting, for the fork's own handler to fail.
        if (Exit.isFailure(yield* Effect.exit(restore(nextTurn)))) return
        const tickets = waiting
        waiting = []
        if (tickets.every((ticket) => ticket.cancelled)) return
        const groupScope = yield* Scope.make()
        const begun = yield* Effect.exit(restore(Scope.extend(options.begin, groupScope)))
        if (Exit.isFailure(begun)) {
          yield* Scope.close(groupScope, Exit.void)
          return yield* refuse(
            tickets,
            Option.getOrElse(Cause.failureOption(begun.cause), () => closed)
          )
        }
        const group: Group = { settled: Once.make() }
        const ran = yield* Effect.exit(restore(runTurns(tickets, group)))
        if (Exit.isFailure(ran)) {
          yield* refuse(tickets, closed)
          Once.unsafeDone(group.settled, Exit.fail(closed))
          return yield* Scope.close(groupScope, Exit.void)
        }
        waiting = [...ran.value, ...waiting]
        const committed = yield* Effect.exit(options.commit)
        if (Exit.isFailure(committed)) yield* options.rollback
        yield* Scope.close(groupScope, Exit.void)
        if (Exit.isFailure(committed)) return Once.unsafeDone(group.settled, committed)
        // Forked (and uninterruptible, as this fiber is here) so that the next group begins now.
        yield* Effect.forkIn(
          Effect.flatMap(Effect.exit(options.durable), (durable) => Once.done(group.settled, durable)),
          scope
        )
      })
    )
    const start: Effect.Effect<void> = Effect.suspend(() => {
      running = true
      return Effect.asVoid(
        Effect.forkIn(
          // The member that starts it is uninterruptible there, and a fork inherits that.
          Effect.interruptible(runGroup).pipe(
            // Interruption stays with the fiber once it has come, even where runGroup catches it:
            // whatever the point it came at, those still waiting for a group are failed here.
            Effect.onInterrupt(() =>
              Effect.suspend(() => {
                const left = waiting
                waiting = []
                return refuse(left, closed)
              })
            ),
            Effect.ensuring(
              Effect.suspend(() => {
                running = false
                return waiting.length > 0 ? start : Effect.void
              })
            )
          ),
          scope
        )
      )
    })

    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function* () {
          const ticket: Ticket = { turn: Once.make(), done: Once.make(), cancelled: false }
          waiting.push(ticket)
          if (!running) yield* start
          const turn = yield* Effect.exit(restore(Once.wait(ticket.turn)))
          if (Exit.isFailure(turn)) {
            // Given up (or refused) before its work began: a group that had just given it its
            // turn must not wait for it.
            ticket.cancelled = true
            Once.unsafeDone(ticket.done, Exit.void)
            return yield* Effect.failCause(turn.cause)
          }
          const worked = yield* Effect.exit(options.member(restore(effect)))
          Once.unsafeDone(ticket.done, Exit.void)
          yield* Once.wait(turn.value.settled)
          return yield* worked
        })
      )

    return { transaction }
  })
