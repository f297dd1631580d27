import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { ActiveSessions } from "../../../application/ActiveSessions.js"
import type { PortcullisApi } from "../Api.js"
import { CurrentPrincipal } from "../Authentication.js"

export const SessionsHandlers = (api: PortcullisApi) =>
  HttpApiBuilder.group(api, "sessions", (handlers) =>
    Effect.gen(function* () {
      const sessions = yield* ActiveSessions
      return handlers
        .handle("list", () => Effect.flatMap(CurrentPrincipal, sessions.list))
        .handle("revoke", ({ path }) =>
          Effect.flatMap(CurrentPrincipal, (principal) => sessions.revoke(principal, path.family_id))
        )
        .handle("revokeOthers", () =>
          Effect.flatMap(CurrentPrincipal, sessions.revokeOthers).pipe(
            Effect.map((revoked) => ({ detail: "Every other session has ended; this one goes on.", revoked }))
          )
        )
    })
  )
