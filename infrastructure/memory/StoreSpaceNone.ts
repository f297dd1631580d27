import { Effect, Layer } from "effect"
import { StoreSpace } from "../../application/ports/StoreSpace.js"

/** A store whose room is its own business: memory, and PostgreSQL, whose autovacuum gives it back. */
export const layer = Layer.succeed(StoreSpace, StoreSpace.of({ reclaim: () => Effect.succeedNone }))
