import { Clock, Duration, Effect, Either, FiberSet } from "effect"

/**
 * A refusal as it is answered, and the work behind it whose cost tells one refusal from another
 * (a wrong code counted against a request that exists, or none found to count it against), which
 * the answer never waits for.
 */
export interface Refusal<E, R> {
  readonly error: E
  readonly work: Effect.Effect<void, unknown, R>
}

/**
 * Answers whose time must not tell which way a request went (a known address or not;
 * docs/behaviour.md, "Telling nothing"). A floor alone is not enough: on a slow disk the known side's writes can take
 * longer than any floor chosen, and then the answer's time tells the address again. So the work
 * only one side does runs in a fiber of its own, and the answer comes at the floor whether or not
 * that work has finished; work still running then goes on detached, its failure logged (the
 * answer was the same either way). Shutdown waits for detached work to end.
 */
export class EvenAnswers extends Effect.Service<EvenAnswers>()("app/EvenAnswers", {
  scoped: Effect.gen(function* () {
    const detached = yield* FiberSet.make()
    // Added after the set, so it runs before the set's own finalizer interrupts what is left.
    yield* Effect.addFinalizer(() => FiberSet.awaitEmpty(detached))

    const detach = <E, R>(work: Effect.Effect<void, E, R>) =>
      FiberSet.run(
        detached,
        work.pipe(
          Effect.catchAllCause((cause) => Effect.logError("work behind an even answer failed", cause)),
          Effect.withSpan("EvenAnswers.detached")
        )
      )

    /**
     * Runs `decide` (the work both sides do alike: a lookup; its failure is the answer's) and then
     * the work it returns, and answers once `floor` has passed since the call, not before and not
     * later for that work's sake.
     */
    const atFloor = <E, R, E2, R2>(
      floor: Duration.DurationInput,
      decide: Effect.Effect<Effect.Effect<void, E2, R2>, E, R>
    ) => Effect.all([Effect.flatMap(decide, detach), Effect.sleep(floor)], { concurrency: 2, discard: true })

    /**
     * Runs `attempt` (the work every outcome does alike; its failure is the answer's, at once). A
     * success is answered as soon as it comes: only who holds the secret gets one, so its time
     * tells nothing. A refusal is answered once `floor` has passed since the call, its work
     * detached as atFloor's is, so no refusal waits for what only some refusals spend.
     *
     * The floor is a time reached, not a sleep raced beside the attempt: under an uninterruptible
     * caller (Lockout's guard) a forked sleep cannot be cut short, and a success would wait for it.
     */
    const refusedAtFloor = <A, E, R, E2, R2>(
      floor: Duration.DurationInput,
      attempt: Effect.Effect<Either.Either<A, Refusal<E2, R2>>, E, R>
    ): Effect.Effect<A, E | E2, R | R2> =>
      Effect.gen(function* () {
        const started = yield* Clock.currentTimeMillis
        const outcome = yield* attempt
        if (Either.isRight(outcome)) return outcome.right
        yield* detach(outcome.left.work)
        const elapsed = (yield* Clock.currentTimeMillis) - started
        yield* Effect.sleep(Duration.millis(Math.max(0, Duration.toMillis(floor) - elapsed)))
        return yield* Effect.fail(outcome.left.error)
      })

    return { atFloor, refusedAtFloor } as const
  })
}) {}
