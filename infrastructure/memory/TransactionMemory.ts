import { Effect, FiberRef, Layer } from "effect"
import { Transaction } from "../../application/ports/Transaction.js"

/**
 * Transactions of the memory store: one at a time, as SQLite's write lock makes them, so that a
 * use case's check and its writes are not interleaved with another's. Nothing rolls back: the
 * memory store is for tests and try-outs. A nested call joins the one its fiber is in.
 */
export const make = Effect.gen(function* () {
  const lock = yield* Effect.makeSemaphore(1)
  const inside = FiberRef.unsafeMake(false)
  return Transaction.of({
    transaction: (effect) =>
      Effect.flatMap(FiberRef.get(inside), (nested) =>
        nested ? effect : lock.withPermits(1)(Effect.locally(effect, inside, true))
      )
  })
})

export const layer = Layer.effect(Transaction, make)
