import { Effect, type Exit } from "effect"

/**
 * An outcome given once, awaited by any number of fibers: what Effect's Deferred does, for the
 * group commit's hand-overs (three a transaction) and the log's syncs. A Deferred costs several
 * microseconds to make (5.7 µs measured, most of it copying its prototype), more than a savepoint.
 */
export interface Once<A, E = never> {
  outcome: Exit.Exit<A, E> | undefined
  readonly waiters: Set<(outcome: Exit.Exit<A, E>) => void>
}

export const make = <A, E = never>(): Once<A, E> => ({ outcome: undefined, waiters: new Set() })

/** Gives the outcome to every fiber waiting and to all that ask later; a second outcome is ignored. */
export const unsafeDone = <A, E>(self: Once<A, E>, outcome: Exit.Exit<A, E>): void => {
  if (self.outcome !== undefined) return
  self.outcome = outcome
  for (const resume of self.waiters) resume(outcome)
  self.waiters.clear()
}

export const done = <A, E>(self: Once<A, E>, outcome: Exit.Exit<A, E>): Effect.Effect<void> =>
  Effect.sync(() => unsafeDone(self, outcome))

/** The outcome, once given; interrupted while it waits, the fiber stops waiting. */
export const wait = <A, E>(self: Once<A, E>): Effect.Effect<A, E> =>
  Effect.async<A, E>((resume) => {
    if (self.outcome !== undefined) return resume(self.outcome)
    self.waiters.add(resume)
    return Effect.sync(() => {
      self.waiters.delete(resume)
    })
  })
