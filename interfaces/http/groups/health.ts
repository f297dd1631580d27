import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { StoreUnavailableError } from "../../../domain/errors.js"
import { placed } from "../Api.js"
import { declared } from "../problemSchemas.js"

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
        .addSuccess(Schema.Struct({ status: Schema.Literal("ready") }).annotations({ examples: [{ status: "ready" }] }))
        .addError(declared(StoreUnavailableError))
        .annotate(OpenApi.Description, "200 when the database and the revocation store answer; 503 problem otherwise.")
    )
)
