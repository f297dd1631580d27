import { Context, Effect, FiberRef } from "effect"
import { RequestContext } from "../../application/Audit.js"
import { Actor } from "../../domain/Audit.js"
import { clientInfo } from "./clientInfo.js"
import type { Step } from "./step.js"

/** Methods that change nothing, so record nothing: GET /me and the other reads pay nothing for the audit log. */
const reads = new Set(["GET", "HEAD", "OPTIONS"])

/**
 * The audit log's request context (client address and user agent; nobody as the actor until a
 * route says otherwise) for every request that may change something. After the pipeline's first
 * step, which resolved the client address.
 *
 * The server runs each request in a fiber of its own, so the context is set on that fiber for the
 * rest of its life, as the request id is (middleware.ts), rather than provided for a scope: a
 * scope costs an acquire-use-release and two more copies of the fiber's locals on every request.
 */
export const auditContext: Step = (next) => (routed) =>
  reads.has(routed.request.method)
    ? next(routed)
    : Effect.zipRight(
        FiberRef.update(
          FiberRef.currentContext,
          Context.add(RequestContext, { actor: Actor.none, client: clientInfo(routed.request) })
        ),
        next(routed)
      )
