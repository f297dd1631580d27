import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Context, Effect, Option } from "effect"
import type { Settings } from "../../config/Settings.js"
import { auditContext } from "./auditContext.js"
import { cors } from "./cors.js"
import { cacheableDocuments } from "./documents.js"
import { hashingQueue } from "./hashingQueue.js"
import { requestObserver } from "./metrics.js"
import { problemResponses, responseHeaders } from "./middleware.js"
import { oauthAnswers } from "./oauthAnswers.js"
import { originCheck } from "./originCheck.js"
import { rateLimits } from "./rateLimits.js"
import type { RouteCatalog } from "./routes.js"
import { type Next, pass, type Step } from "./step.js"
import { redactSpanQuery } from "./tracing.js"

/**
 * The steps in the order a request meets them, the first outermost: each answer comes back
 * through the steps before it. They wrap every route of the router (HttpRouter.use), so the
 * route is the one the router resolved, once (routes.ts completes the router so that every request
 * resolves to one), and the route's handler gets the request as the steps left it.
 */
export const pipeline =
  (routes: RouteCatalog, steps: ReadonlyArray<Step>) =>
  (handler: HttpApp.Default): HttpApp.Default => {
    const route: Next = ({ received, request }) =>
      request === received ? handler : Effect.provideService(handler, HttpServerRequest.HttpServerRequest, request)
    const first = steps.reduceRight<Next>((next, step) => step(next), route)
    return Effect.flatMap(Effect.context<HttpServerRequest.HttpServerRequest>(), (context) => {
      const request = Context.get(context, HttpServerRequest.HttpServerRequest)
      const matched = Option.getOrUndefined(Context.getOption(context, HttpRouter.RouteContext))
      return first({ received: request, request, route: routes.resolve(request.method, request.url, matched?.route) })
    })
  }

/** What the service's pipeline needs beside the settings: its routes, and the pages mounted beside the API. */
export interface PipelineOptions {
  readonly routes: RouteCatalog
  /** The interactive docs page and the OpenAPI document: cached and compressed. */
  readonly documents: ReadonlyArray<string>
  /** The Content-Security-Policy of the routes that are pages (docs, demo, hosted pages); the API's elsewhere. */
  readonly policies: ReadonlyMap<string, string>
  /** METRICS_ENABLED: every request is timed into the metrics. */
  readonly metrics: boolean
}

/**
 * The service's request pipeline, in request order. Each step says in its own module why it
 * stands where it does; in short, a request refused early pays for nothing after: a foreign
 * Origin waits for no hashing slot and is counted by no limit, a full hashing queue counts
 * nothing, and every request to a limited route counts before its body is read or judged.
 */
export const servicePipeline = (settings: Settings, options: PipelineOptions) =>
  Effect.gen(function* () {
    const { server, cookies, limits, observability } = settings
    const limit = yield* rateLimits(settings)
    return pipeline(options.routes, [
      // The request id, the client's address, the security headers, the access-log line and
      // the metrics: every answer, problems and preflights included, comes back through here.
      responseHeaders({
        hsts: server.publicUrl.protocol === "https:",
        policies: options.policies,
        proxies: { headers: server.trustedProxyHeaders, count: server.trustedProxyCount },
        observe: options.metrics ? requestObserver() : undefined
      }),
      // The provider's protocol routes: refusals in OAuth's shapes, and CORS for any page where they take it.
      oauthAnswers,
      // With spans exported: the query's values out of the request's span.
      Option.isSome(observability.otlpEndpoint) ? redactSpanQuery : pass,
      cacheableDocuments(options.documents),
      originCheck({ ...cookies, publicUrl: server.publicUrl, corsOrigins: server.corsOrigins }),
      hashingQueue(limits.hashingQueueLimit),
      limit,
      // Body checks, and every failure after them as a problem+json answer.
      problemResponses,
      auditContext,
      cors(server.corsOrigins)
    ])
  })
