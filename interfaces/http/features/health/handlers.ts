import { Effect } from "effect"
import { Readiness } from "../../../../application/Readiness.js"
import { featureApi } from "../../Feature.js"
import { healthGroup } from "./group.js"

/** The health group's handlers; always served, and no feature of the table (no name to leave out). */
export const health = featureApi(healthGroup, (handlers) =>
  Effect.map(Readiness, (readiness) =>
    handlers
      .handle("healthz", () => Effect.succeed({ status: "ok" as const }))
      .handle("readyz", () =>
        Effect.map(readiness.check, ({ protectionsLocal }) =>
          // Still ready: requests are served, with the protections counted per process.
          protectionsLocal ? { status: "ready" as const, protections: "local" as const } : { status: "ready" as const }
        )
      )
  )
)
