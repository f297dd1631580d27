/**
 * For the suites that measure the machine (the timing ratios, the soak's event-loop figures): a
 * neighbour's load can push one run past its bound with nothing changed in the service, and a
 * real regression pushes every run past it. So the measurement is taken again, up to `attempts`
 * times in all, until it keeps its bounds. Every attempt that does not is printed as it ends, so
 * a pass on a later attempt still shows what the first one saw; when none does, the error gives
 * each attempt's figures, the first one's first.
 *
 * Only bounds go through `outOfBounds`: anything `measure` throws (a wrong status, a 5xx, a
 * crash) fails at once, as it would without a retry.
 */
export const withinBoundsOnSomeAttempt = async <M>(options: {
  readonly label: string
  readonly attempts: number
  readonly measure: (attempt: number) => Promise<M>
  /** The bounds the measurement broke, each as a sentence with its figures; none when it kept them. */
  readonly outOfBounds: (measured: M) => ReadonlyArray<string>
}): Promise<M> => {
  const failures: Array<string> = []
  for (let attempt = 1; attempt <= options.attempts; attempt++) {
    const measured = await options.measure(attempt)
    const broken = options.outOfBounds(measured)
    if (broken.length === 0) {
      if (failures.length > 0) {
        console.warn(
          `${options.label}: kept its bounds on attempt ${attempt} of ${options.attempts}, after:\n${failures.join("\n")}`
        )
      }
      return measured
    }
    const failure = `attempt ${attempt}: ${broken.join("; ")}`
    failures.push(failure)
    console.warn(`${options.label}: ${failure}${attempt < options.attempts ? " (measuring again)" : ""}`)
  }
  throw new Error(`${options.label}: out of bounds on all ${options.attempts} attempts:\n${failures.join("\n")}`)
}
