import { Effect } from "effect"
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
 */
export const auditContext: Step = (next) => (routed) =>
  reads.has(routed.request.method)
    ? next(routed)
    : Effect.provideService(next(routed), RequestContext, { actor: Actor.none, client: clientInfo(routed.request) })
