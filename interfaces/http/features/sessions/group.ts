import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { SessionNotFoundError, StoreUnavailableError } from "../../../../domain/errors.js"
import { FamilyId, SessionCursor, SessionInfo, SessionLimit } from "../../../../domain/Session.js"
import { type ApiShape, listOf, placed } from "../../Api.js"
import { declared } from "../../problemSchemas.js"
import { Authentication } from "../../security.js"

export const RevokedSessions = Schema.Struct({
  detail: Schema.String,
  revoked: Schema.Int.annotations({ description: "How many sessions were ended." })
}).annotations({
  identifier: "RevokedSessions",
  examples: [{ detail: "Every other session has ended; this one goes on.", revoked: 2 }]
})

export const SessionListParams = Schema.Struct({
  limit: Schema.optional(SessionLimit),
  cursor: Schema.optional(SessionCursor)
})

/** The signed-in user's live sessions: list them, end one, end all the others. */
export const sessionsGroup = (shape: ApiShape) =>
  placed(
    {
      prefix: shape.authPrefix,
      title: "Sessions",
      description:
        "The signed-in user's live sessions (one per sign-in, across refreshes): list them, end one, end all the others."
    },
    HttpApiGroup.make("sessions")
      .addError(declared(StoreUnavailableError))
      .add(
        HttpApiEndpoint.get("list", "/sessions")
          .annotate(OpenApi.Summary, "List live sessions")
          .annotate(
            OpenApi.Description,
            'The caller\'s live sessions, their own first, then the others most recently used first: at most `limit` (100 unless given, at most 500). When more follow, the `Link` header names the next page: `<…/sessions?limit=…&cursor=…>; rel="next"`.'
          )
          .setUrlParams(SessionListParams)
          .addSuccess(listOf(SessionInfo))
      )
      .add(
        HttpApiEndpoint.del("revoke", "/sessions/:family_id")
          .annotate(OpenApi.Summary, "End a session")
          .setPath(Schema.Struct({ family_id: FamilyId }))
          .addSuccess(HttpApiSchema.NoContent)
          .addError(declared(SessionNotFoundError))
      )
      .add(
        HttpApiEndpoint.post("revokeOthers", "/sessions/revoke-others")
          .annotate(OpenApi.Summary, "End every other session")
          .addSuccess(RevokedSessions)
      )
      .middleware(Authentication)
  )
