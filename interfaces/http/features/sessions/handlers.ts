import { Effect } from "effect"
import { Sessions } from "../../../../application/Sessions.js"
import { CurrentPrincipal } from "../../Authentication.js"
import { feature, featureApi, shapeOf } from "../../Feature.js"
import { sessionsGroup } from "./group.js"

/** The sessions group's handlers. */
export const sessions = feature({
  name: "sessions",
  limits: [],
  api: (context) =>
    featureApi(sessionsGroup(shapeOf(context)), (handlers) =>
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
