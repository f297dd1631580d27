import { Effect } from "effect"
import { UserId } from "../domain/User.js"
import { ProtectionsCounting } from "./ports/ProtectionsCounting.js"
import { StoreUnavailableError } from "./ports/StoreUnavailableError.js"
import { UserRepo } from "./ports/UserRepo.js"

/** An id no user has: a lookup that exercises the store without finding anything. */
const probeId = UserId.make("readiness-probe")

/** A store that takes longer than this to answer is not ready to serve. */
const PROBE_TIMEOUT = "2 seconds"

/** What a ready service tells beside being ready: whether its protections count in this process only. */
export interface ReadinessReport {
  readonly protectionsLocal: boolean
}

/**
 * Whether the store every request needs answers now: the database, the record of users and
 * sessions (ended sessions included). Redis is not needed to serve: without it rate limits and
 * lockout count in each process on its own, which the report says, and only what Redis alone can
 * answer (OAuth states, passkey challenges kept there) fails with 503. Probed through the ports,
 * so it speaks for whichever adapters the deployment chose.
 */
export class Readiness extends Effect.Service<Readiness>()("app/Readiness", {
  effect: Effect.gen(function* () {
    const users = yield* UserRepo
    const protections = yield* ProtectionsCounting

    /** Fails, naming the store, when the database does not answer in time. */
    const check: Effect.Effect<ReadinessReport, StoreUnavailableError> = users.findById(probeId).pipe(
      Effect.timeout(PROBE_TIMEOUT),
      Effect.catchAll(() => Effect.fail(new StoreUnavailableError({ store: "database" }))),
      Effect.zipRight(protections.local),
      Effect.map((protectionsLocal) => ({ protectionsLocal }))
    )

    return { check } as const
  })
}) {}
