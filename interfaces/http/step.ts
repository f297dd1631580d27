import type * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type { ResolvedRoute } from "./routes.js"

/** A request on its way through the pipeline (pipeline.ts), with its route, as the router resolved it. */
export interface Routed {
  /** The request as the server received it. */
  readonly received: HttpServerRequest.HttpServerRequest
  /** The request as the steps before made it (its client address resolved, its body's type named). */
  readonly request: HttpServerRequest.HttpServerRequest
  readonly route: ResolvedRoute
}

/** What answers a request past a step: the steps after it, then the router. */
export type Next = (routed: Routed) => HttpApp.Default

/** One step of the pipeline: it answers a request itself, or hands it (maybe changed) to the next. */
export type Step = (next: Next) => Next

/** A step that is off: the request goes straight on. */
export const pass: Step = (next) => next
