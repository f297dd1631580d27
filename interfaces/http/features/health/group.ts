import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { StoreUnavailableError } from "../../../../domain/errors.js"
import { placed } from "../../Api.js"
import { declared } from "../../problemSchemas.js"

/** Liveness and readiness, at the root whatever the auth prefix, for load balancers. */
export const healthGroup = placed(
  {
    prefix: "",
    title: "Health",
    description: "Liveness (/healthz: the process answers) and readiness (/readyz: its stores answer)."
  },
  HttpApiGroup.make("health")
    .add(
      HttpApiEndpoint.get("healthz", "/healthz")
        .annotate(OpenApi.Summary, "Liveness")
        .addSuccess(Schema.Struct({ status: Schema.Literal("ok") }).annotations({ examples: [{ status: "ok" }] }))
    )
    .add(
      HttpApiEndpoint.get("readyz", "/readyz")
        .annotate(OpenApi.Summary, "Readiness")
        .addSuccess(
          Schema.Struct({
            status: Schema.Literal("ready"),
            protections: Schema.optional(
              Schema.Literal("local").annotations({
                description:
                  "Present while the Redis of REDIS_URL is unusable: rate limits and lockout count in each process on its own."
              })
            )
          }).annotations({ examples: [{ status: "ready" }, { status: "ready", protections: "local" }] })
        )
        .addError(declared(StoreUnavailableError))
        .annotate(
          OpenApi.Description,
          "200 when the database answers, saying so when rate limits and lockout count per process because Redis is unusable; 503 problem otherwise."
        )
    )
)
