import * as Etag from "@effect/platform/Etag"
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiSwagger from "@effect/platform/HttpApiSwagger"
import * as HttpPlatform from "@effect/platform/HttpPlatform"
import type * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as Path from "@effect/platform/Path"
import { Context, Effect, Layer, Option, Scope } from "effect"
import type { Deployment } from "../../config/Deployment.js"
import type { Settings } from "../../config/Settings.js"
import { AccessGuardsLive } from "./AccessLevels.js"
import { AuthenticationLive } from "./Authentication.js"
import { AccessLog } from "./accessLog.js"
import { auditContext } from "./auditContext.js"
import { SessionTransport } from "./cookies.js"
import { cors } from "./cors.js"
import { DEMO_PATH, demoLayer, demoPaths, noDemo } from "./demo/demo.js"
import { cacheableDocuments } from "./documents.js"
import { assembleApi, type Feature, type FeatureApi, type LimitedRoute } from "./Feature.js"
import { hashingQueue } from "./hashingQueue.js"
import { health } from "./health.js"
import { hostedLayer, hostedPaths, noHostedPages } from "./hosted/hosted.js"
import { METRICS_PATH, type MetricsText, metricsRoute, requestObserver } from "./metrics.js"
import { problemResponses, responseHeaders } from "./middleware.js"
import { originCheck } from "./originCheck.js"
import { rateLimits, unlimitedPaths } from "./rateLimits.js"
import { routeTable } from "./routes.js"
import { redactedSpanHeaders, redactSpanQuery } from "./tracing.js"

type PlatformServices = Scope.Scope | HttpRouter.HttpRouter.DefaultServices

// biome-ignore lint/suspicious/noExplicitAny: the bound Context.pick puts on the tags it keeps
type AnyTag = Context.Tag<any, any>

/**
 * HttpApiBuilder.serve, whose requests run with the platform's services in their context, and
 * `references` (settings read from the context by code that runs outside a group's handlers: the
 * store calls' StoreTimeout, in the principal's lookup), rather than with every service of the
 * application. The handlers and middleware took theirs when they were built (a group merges its
 * own into each request), and each service a request adds to its context (the request, its route,
 * the principal, a transaction's connection) copies the context it is added to: about forty
 * entries, four to six times a request. GET /me under wrk: 248 → 229 µs of CPU, 4,179 → 4,621 a
 * second. A reference left out is seen by the request as its default.
 */
export const serveApi = (references: ReadonlyArray<AnyTag>) =>
  Layer.unwrapEffect(
    Effect.map(HttpApiBuilder.httpApp, (app) =>
      Layer.scopedDiscard(
        Effect.flatMap(HttpServer.HttpServer, (server) =>
          Effect.mapInputContext(
            server.serve(app),
            (context: Context.Context<PlatformServices>): Context.Context<PlatformServices> =>
              Context.pick(
                Scope.Scope,
                HttpPlatform.HttpPlatform,
                Etag.Generator,
                FileSystem.FileSystem,
                Path.Path,
                ...references
              )(context)
          )
        )
      )
    )
  ).pipe(Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer]))

/** The features a deployment keeps: the required ones, and those its `routeGroups` name (all by default). */
export const keptFeatures = <F extends Feature<string, unknown>>(
  features: ReadonlyArray<F>,
  deployment: Deployment
): ReadonlyArray<F> => {
  const kept = new Set<string>(deployment.routeGroups ?? features.map((feature) => feature.name))
  return features.filter((feature) => feature.required !== undefined || kept.has(feature.name))
}

/** The features a deployment serves: those it keeps that their own settings turn on. */
export const servedFeatures = <F extends Feature<string, unknown>>(
  features: ReadonlyArray<F>,
  settings: Settings,
  deployment: Deployment
): ReadonlyArray<F> =>
  keptFeatures(features, deployment).filter((feature) => feature.enabled?.(settings, deployment) ?? true)

/** What a deployment serves: the groups of its features (their handlers with them) and their limited routes. */
export interface Served<P extends FeatureApi<unknown>> {
  readonly parts: ReadonlyArray<P>
  readonly limits: ReadonlyArray<LimitedRoute>
}

/** The API of the groups served, the health group with them. */
export const servedApi = (served: Served<FeatureApi<unknown>>, settings: Settings) =>
  assembleApi([...served.parts, health], {
    publicUrl: settings.server.publicUrl,
    globallyLimited: (path) => Option.isSome(settings.limits.globalRateLimit) && !unlimitedPaths.has(path),
    originChecked: settings.cookies.tokenTransport === "cookie"
  })

/**
 * The HTTP application: the API of the features served with their handlers, the OpenAPI document
 * and docs page under the auth prefix, the problem renderer, the rate limits of the features
 * served, the security headers and CORS. A feature left out has no routes and no limits. Needs
 * the use cases and an HttpServer.
 *
 * With `metrics` (METRICS_ENABLED), every request is timed into them, and they are served at
 * /metrics unless METRICS_PORT gives them a port of their own. With spans exported, they are
 * kept free of secret headers and query values.
 */
export const httpLayer = <P extends FeatureApi<unknown>>(
  settings: Settings,
  served: Served<P>,
  references: ReadonlyArray<AnyTag>,
  metrics?: MetricsText
) => {
  const api = servedApi(served, settings)
  const handlers = Layer.mergeAll(health.handlers, ...served.parts.map((part): P["handlers"] => part.handlers))
  const { authPrefix, publicUrl, corsOrigins } = settings.server
  const docsPath = `${authPrefix}/docs`
  const openApiPath = `${authPrefix}/openapi.json`
  const { demo, hostedPages, productName } = settings.server
  const { metricsPort, otlpEndpoint } = settings.observability
  const metricsHere = metrics !== undefined && Option.isNone(metricsPort)
  const routes = routeTable(api, [
    docsPath,
    openApiPath,
    ...(demo ? demoPaths : []),
    ...(hostedPages ? hostedPaths : []),
    ...(metricsHere ? [METRICS_PATH] : [])
  ])
  const traced = Option.isSome(otlpEndpoint)
  const ApiLive = HttpApiBuilder.api(api).pipe(
    Layer.provide(handlers),
    Layer.provide(AccessGuardsLive),
    Layer.provide(AuthenticationLive),
    Layer.provide(
      SessionTransport.layer({
        authPrefix,
        ...settings.cookies,
        refreshTokenExpireDays: settings.tokens.refreshTokenExpireDays
      })
    )
  )
  const proxies = { headers: settings.server.trustedProxyHeaders, count: settings.server.trustedProxyCount }
  return serveApi(references).pipe(
    Layer.provide(HttpApiSwagger.layer({ path: docsPath as `/${string}` })),
    Layer.provide(demo ? demoLayer(authPrefix) : noDemo),
    Layer.provide(
      hostedPages
        ? hostedLayer({ authPrefix, product: productName, passwordMinLength: settings.accounts.passwordMinLength })
        : noHostedPages
    ),
    Layer.provide(metricsHere ? metricsRoute(metrics) : Layer.empty),
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: openApiPath as `/${string}` })),
    // Layers build bottom-up and each middleware wraps the ones added before it. The headers and
    // the access log wrap everything, so they see every response before it is sent.
    Layer.provide(
      HttpApiBuilder.middleware(
        Effect.map(AccessLog, (accessLog) =>
          responseHeaders({
            hsts: publicUrl.protocol === "https:",
            docsPath,
            ...(demo ? { demoPath: DEMO_PATH } : {}),
            ...(hostedPages ? { hostedPaths } : {}),
            proxies,
            routes,
            observe: metrics === undefined ? undefined : requestObserver(),
            accessLog
          })
        )
      )
    ),
    Layer.provide(traced ? HttpApiBuilder.middleware(redactSpanQuery) : Layer.empty),
    Layer.provide(HttpApiBuilder.middleware(cacheableDocuments([docsPath, openApiPath]))),
    // Cookie mode's Origin check wraps everything but the headers and the access log: a refused
    // request waits for no hashing slot and is not counted (originCheck.ts).
    Layer.provide(HttpApiBuilder.middleware(originCheck({ ...settings.cookies, publicUrl, corsOrigins }))),
    // A request refused for a full hashing queue is not counted by the rate limits.
    Layer.provide(
      HttpApiBuilder.middleware(hashingQueue(authPrefix, served.limits, settings.limits.hashingQueueLimit))
    ),
    // This one wraps problemResponses, so a request is counted before any body check
    // (test/http/rate-limits).
    Layer.provide(HttpApiBuilder.middleware(rateLimits(settings, served.limits))),
    Layer.provide(HttpApiBuilder.middleware(problemResponses(routes))),
    Layer.provide(HttpApiBuilder.middleware(auditContext)),
    // An API middleware, not a serve one: its preflight answers still get the security headers.
    Layer.provide(HttpApiBuilder.middleware(cors({ origins: corsOrigins, routes }))),
    Layer.provide(ApiLive),
    Layer.provide(traced ? redactedSpanHeaders : Layer.empty)
  )
}
