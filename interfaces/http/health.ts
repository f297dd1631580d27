import { Effect } from "effect"
import { Readiness } from "../../application/Readiness.js"
import { featureApi } from "./Feature.js"
import { healthGroup } from "./groups/health.js"

/** Liveness and readiness, at the root whatever the auth prefix, for load balancers; always served. */
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
