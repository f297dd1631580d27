import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import type { PortcullisApi } from "../Api.js"

export const HealthHandlers = (api: PortcullisApi) =>
  HttpApiBuilder.group(api, "health", (handlers) =>
    handlers.handle("healthz", () => Effect.succeed({ status: "ok" as const }))
  )
