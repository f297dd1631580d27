import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect } from "effect"
import { RequestContext } from "../../application/Audit.js"
import { Actor } from "../../domain/Audit.js"
import { clientInfo } from "./clientInfo.js"

/** Methods that change nothing, so record nothing: GET /me and the other reads pay nothing for the audit log. */
const reads = new Set(["GET", "HEAD", "OPTIONS"])

/**
 * The audit log's request context (client address and user agent; nobody as the actor until a
 * route says otherwise) for every request that may change something. Inside the outermost
 * middleware, which resolved the client address.
 */
export const auditContext = (app: HttpApp.Default): HttpApp.Default =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    reads.has(request.method)
      ? app
      : Effect.provideService(app, RequestContext, { actor: Actor.none, client: clientInfo(request) })
  )
