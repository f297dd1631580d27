import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { placed } from "../Api.js"

/** Liveness and readiness, at the root whatever the auth prefix, for load balancers. */
export const healthGroup = placed(
  {
    prefix: "",
    title: "Health",
    description: "Liveness (/healthz: the process answers) and readiness (/readyz: its stores answer)."
  },
  HttpApiGroup.make("health")
    .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Schema.Struct({ status: Schema.Literal("ok") })))
    .add(
      HttpApiEndpoint.get("readyz", "/readyz")
        .addSuccess(Schema.Struct({ status: Schema.Literal("ready") }))
        .annotate(OpenApi.Description, "200 when the database and the revocation store answer; 503 problem otherwise.")
    )
)
