import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Option } from "effect"
import { Sessions } from "../../../../application/Sessions.js"
import {
  positionOfCursor,
  SESSION_PAGE_DEFAULT,
  type SessionPosition,
  sessionCursor
} from "../../../../domain/Session.js"
import { CurrentPrincipal } from "../../Authentication.js"
import { feature, featureApi, shapeOf } from "../../Feature.js"
import { sessionsGroup } from "./group.js"

/**
 * The next page of the list, announced as RFC 8288 asks (`Link: <…>; rel="next"`): the path the
 * request came by, the auth prefix with it.
 */
const announceNext = (url: string, limit: number, next: SessionPosition) => {
  const path = url.split("?")[0]
  const target = `${path}?${new URLSearchParams({ limit: String(limit), cursor: sessionCursor(next) })}`
  return HttpApp.appendPreResponseHandler((_request, response) =>
    Effect.succeed(HttpServerResponse.setHeader(response, "link", `<${target}>; rel="next"`))
  )
}

/** The sessions group's handlers. */
export const sessions = feature({
  name: "sessions",
  limits: [],
  api: (context) =>
    featureApi(sessionsGroup(shapeOf(context)), (handlers) =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        return handlers
          .handle("list", ({ request, urlParams }) =>
            Effect.gen(function* () {
              const limit = urlParams.limit ?? SESSION_PAGE_DEFAULT
              const page = yield* sessions.list(yield* CurrentPrincipal, {
                limit,
                after: Option.map(Option.fromNullable(urlParams.cursor), positionOfCursor)
              })
              if (Option.isSome(page.next)) yield* announceNext(request.url, limit, page.next.value)
              return page.sessions
            })
          )
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
