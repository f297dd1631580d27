import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Readiness } from "../../../application/Readiness.js"
import type { PortcullisApi } from "../Api.js"

export const HealthHandlers = (api: PortcullisApi) =>
  HttpApiBuilder.group(api, "health", (handlers) =>
    Effect.map(Readiness, (readiness) =>
      handlers
        .handle("healthz", () => Effect.succeed({ status: "ok" as const }))
        .handle("readyz", () => readiness.check.pipe(Effect.as({ status: "ready" as const })))
    )
  )
