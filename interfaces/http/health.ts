import { Effect } from "effect"
import { Readiness } from "../../application/Readiness.js"
import { featureApi } from "./Feature.js"
import { healthGroup } from "./groups/health.js"

/** Liveness and readiness, at the root whatever the auth prefix, for load balancers; always served. */
export const health = featureApi(healthGroup, (handlers) =>
  Effect.map(Readiness, (readiness) =>
    handlers
      .handle("healthz", () => Effect.succeed({ status: "ok" as const }))
      .handle("readyz", () => readiness.check.pipe(Effect.as({ status: "ready" as const })))
  )
)
