import { Effect } from "effect"
import { UserId } from "../domain/User.js"
import { Blacklist } from "./ports/Blacklist.js"
import { StoreUnavailableError } from "./ports/StoreUnavailableError.js"
import { UserRepo } from "./ports/UserRepo.js"

/** An id no user has: a lookup that exercises the store without finding anything. */
const probeId = UserId.make("readiness-probe")

/** A store that takes longer than this to answer is not ready to serve. */
const PROBE_TIMEOUT = "2 seconds"

/**
 * Whether the stores every request needs answer now: the user store (the database) and the
 * revocation list (Redis when configured). Probed through the ports, so it speaks for whichever
 * adapters the deployment chose.
 */
export class Readiness extends Effect.Service<Readiness>()("app/Readiness", {
  effect: Effect.gen(function* () {
    const users = yield* UserRepo
    const blacklist = yield* Blacklist

    const answers = (probe: Effect.Effect<unknown, StoreUnavailableError>) =>
      probe.pipe(
        Effect.timeout(PROBE_TIMEOUT),
        Effect.as(true),
        Effect.catchAll(() => Effect.succeed(false))
      )

    /** Fails with the stores that do not answer, by name. */
    const check = Effect.gen(function* () {
      const stores = yield* Effect.all(
        { database: answers(users.findById(probeId)), revocations: answers(blacklist.isRevoked(probeId, null)) },
        { concurrency: "unbounded" }
      )
      const down = Object.entries(stores).flatMap(([name, up]) => (up ? [] : [name]))
      if (down.length > 0) return yield* new StoreUnavailableError({ store: down.join(", ") })
    })

    return { check } as const
  })
}) {}
