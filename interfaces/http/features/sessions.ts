import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Effect, Schema } from "effect"
import { Sessions } from "../../../application/Sessions.js"
import { SessionNotFoundError } from "../../../domain/errors.js"
import { FamilyId, SessionInfo } from "../../../domain/Session.js"
import { featureApi } from "../Api.js"
import { Authentication, CurrentPrincipal } from "../Authentication.js"
import { feature } from "../Feature.js"
import { declared } from "../problems.js"

export const RevokedSessions = Schema.Struct({
  detail: Schema.String,
  revoked: Schema.Int.annotations({ description: "How many sessions were ended." })
}).annotations({ identifier: "RevokedSessions" })

/** The signed-in user's live sessions: list them, end one, end all the others. */
export const sessions = feature({
  name: "sessions",
  limits: [],
  api: ({ settings }) =>
    featureApi(
      {
        prefix: settings.server.authPrefix,
        title: "Sessions",
        description:
          "The signed-in user's live sessions (one per sign-in, across refreshes): list them, end one, end all the others."
      },
      HttpApiGroup.make("sessions")
        .add(HttpApiEndpoint.get("list", "/sessions").addSuccess(Schema.Array(SessionInfo)))
        .add(
          HttpApiEndpoint.del("revoke", "/sessions/:family_id")
            .setPath(Schema.Struct({ family_id: FamilyId }))
            .addSuccess(HttpApiSchema.NoContent)
            .addError(declared(SessionNotFoundError))
        )
        .add(HttpApiEndpoint.post("revokeOthers", "/sessions/revoke-others").addSuccess(RevokedSessions))
        .middleware(Authentication),
      (handlers) =>
        Effect.gen(function* () {
          const sessions = yield* Sessions
          return handlers
            .handle("list", () => Effect.flatMap(CurrentPrincipal, sessions.list))
            .handle("revoke", ({ path }) =>
              Effect.flatMap(CurrentPrincipal, (principal) => sessions.end(principal, path.family_id))
            )
            .handle("revokeOthers", () =>
              Effect.flatMap(CurrentPrincipal, sessions.endOthers).pipe(
                Effect.map((revoked) => ({ detail: "Every other session has ended; this one goes on.", revoked }))
              )
            )
        })
    )
})
