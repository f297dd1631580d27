import { Context, Deferred, Duration, Effect, Exit, Option } from "effect"
import { storeUnavailable } from "../application/metrics.js"
import type { StoreUnavailableError } from "../application/ports/StoreUnavailableError.js"

/**
 * How long one call to a store may take (STORE_TIMEOUT_SECONDS): past it the call fails as an
 * unavailable store, so that a hung database answers 503 instead of holding the request. Infinite
 * for a store that runs on the event loop itself (SQLite): no timer can fire while its call runs,
 * and bounding it would only cost each call two fibers.
 */
export class StoreTimeout extends Context.Reference<StoreTimeout>()("infrastructure/StoreTimeout", {
  defaultValue: () => Duration.seconds(5)
}) {}

/**
 * The call's result, or none once `timeout` has passed. The call and its timer run as daemons
 * and the caller waits on whichever ends first, so that a driver that cannot be interrupted at
 * once (a query on a frozen connection) is left to finish in the background instead of holding
 * the answer.
 *
 * Not `Effect.timeout`: that races two child fibers and ends the loser by interruption. Where
 * the caller holds interruption off (a sign-in's counted attempt, decided whatever its client
 * does) a child inherits that and the timer could not end the call; made interruptible, a child
 * would pass the caller's own interruption on to the call, which the caller held off. A daemon
 * is no child: only the timer ends the wait there, and the caller's interruption still waits.
 */
const within = <A, E, R>(effect: Effect.Effect<A, E, R>, timeout: Duration.Duration) =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function* () {
      const outcome = yield* Deferred.make<Option.Option<A>, E>()
      const call = yield* Effect.forkDaemon(Effect.intoDeferred(Effect.asSome(restore(effect)), outcome))
      const timer = yield* Effect.forkDaemon(
        Effect.interruptible(Effect.zipRight(Effect.sleep(timeout), Deferred.succeed(outcome, Option.none())))
      )
      // What ended the wait has ended; only the other one is interrupted (telling an ended fiber
      // would still cost it a turn of the scheduler). A caller interrupted while it waits ends both.
      return yield* restore(Deferred.await(outcome)).pipe(
        Effect.onExit((exit) =>
          Effect.fiberIdWith((self) =>
            Effect.sync(() => {
              const timedOut = Exit.isSuccess(exit) && Option.isNone(exit.value)
              const answered = !timedOut && !Exit.isInterrupted(exit)
              if (!timedOut) timer.unsafeInterruptAsFork(self)
              if (!answered) call.unsafeInterruptAsFork(self)
            })
          )
        )
      )
    })
  )

/** A call to `store` that took longer than `timeout`: logged, and failed as an unavailable store. */
export const timedOut = (store: string, timeout: Duration.Duration): Effect.Effect<never, StoreUnavailableError> =>
  Effect.logError(`${store} operation took longer than ${Duration.format(timeout)}`).pipe(
    Effect.zipRight(storeUnavailable(store))
  )

/**
 * `effect`, bounded by the StoreTimeout of the fiber that runs it; a timeout is logged and fails
 * as `store`.
 */
export const bounded =
  (store: string) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreUnavailableError, R> =>
    Effect.flatMap(StoreTimeout, (timeout) =>
      !Duration.isFinite(timeout)
        ? effect
        : Effect.flatMap(
            within(effect, timeout),
            Option.match({ onSome: Effect.succeed, onNone: () => timedOut(store, timeout) })
          )
    )
