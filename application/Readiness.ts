import { Effect } from "effect"
import { UserId } from "../domain/User.js"
import { StoreUnavailableError } from "./ports/StoreUnavailableError.js"
import { UserRepo } from "./ports/UserRepo.js"

/** An id no user has: a lookup that exercises the store without finding anything. */
const probeId = UserId.make("readiness-probe")

/** A store that takes longer than this to answer is not ready to serve. */
const PROBE_TIMEOUT = "2 seconds"

/**
 * Whether the store every request needs answers now: the database, the record of users and
 * sessions (ended sessions included). Redis is not needed to serve: without it rate limits and
 * lockout fail open and only OAuth callbacks, which spend their state there, answer 503.
 * Probed through the port, so it speaks for whichever adapter the deployment chose.
 */
export class Readiness extends Effect.Service<Readiness>()("app/Readiness", {
  effect: Effect.gen(function* () {
    const users = yield* UserRepo

    /** Fails, naming the store, when the database does not answer in time. */
    const check = users.findById(probeId).pipe(
      Effect.timeout(PROBE_TIMEOUT),
      Effect.asVoid,
      Effect.catchAll(() => Effect.fail(new StoreUnavailableError({ store: "database" })))
    )

    return { check } as const
  })
}) {}
