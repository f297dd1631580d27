import { Context, Duration, Effect, Option } from "effect"
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
 * `effect`, bounded by the StoreTimeout of the fiber that runs it; a timeout is logged and fails
 * as `store`. The call is disconnected: a driver that cannot be interrupted at once (a query on
 * a frozen connection) is left to finish in the background instead of holding the answer.
 */
export const bounded =
  (store: string) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreUnavailableError, R> =>
    Effect.flatMap(StoreTimeout, (timeout) =>
      !Duration.isFinite(timeout)
        ? effect
        : Effect.timeoutOption(Effect.disconnect(effect), timeout).pipe(
            Effect.flatMap(
              Option.match({
                onSome: Effect.succeed,
                onNone: () =>
                  Effect.logError(`${store} operation took longer than ${Duration.format(timeout)}`).pipe(
                    Effect.zipRight(storeUnavailable(store))
                  )
              })
            )
          )
    )
