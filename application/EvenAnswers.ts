import { type Duration, Effect, FiberSet } from "effect"

/**
 * Answers whose time must not tell which way a request went (a known address or not; DECISIONS,
 * anti-enumeration). A floor alone is not enough: on a slow disk the known side's writes can take
 * longer than any floor chosen, and then the answer's time tells the address again. So the work
 * only one side does runs in a fiber of its own, and the answer comes at the floor whether or not
 * that work has finished; work still running then goes on detached, its failure logged (the
 * answer was the same 202 either way). Shutdown waits for detached work to end.
 */
export class EvenAnswers extends Effect.Service<EvenAnswers>()("app/EvenAnswers", {
  scoped: Effect.gen(function* () {
    const detached = yield* FiberSet.make()
    // Added after the set, so it runs before the set's own finalizer interrupts what is left.
    yield* Effect.addFinalizer(() => FiberSet.awaitEmpty(detached))

    /**
     * Runs `decide` (the work both sides do alike: a lookup; its failure is the answer's) and then
     * the work it returns, and answers once `floor` has passed since the call, not before and not
     * later for that work's sake.
     */
    const atFloor = <E, R, E2, R2>(
      floor: Duration.DurationInput,
      decide: Effect.Effect<Effect.Effect<void, E2, R2>, E, R>
    ) =>
      Effect.all(
        [
          Effect.flatMap(decide, (work) =>
            FiberSet.run(
              detached,
              work.pipe(
                Effect.catchAllCause((cause) => Effect.logError("work behind an even answer failed", cause)),
                Effect.withSpan("EvenAnswers.detached")
              )
            )
          ),
          Effect.sleep(floor)
        ],
        { concurrency: 2, discard: true }
      )

    return { atFloor } as const
  })
}) {}
