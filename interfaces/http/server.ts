import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiSwagger from "@effect/platform/HttpApiSwagger"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import { Effect, Layer, Option } from "effect"
import type { Deployment } from "../../config/Deployment.js"
import type { Settings } from "../../config/Settings.js"
import { AccessGuardsLive } from "./AccessLevels.js"
import { AuthenticationLive } from "./Authentication.js"
import { SessionTransport } from "./cookies.js"
import { demoLayer, demoPaths, demoPolicy, noDemo } from "./demo/demo.js"
import { DEV_INBOX_LATEST_PATH, DEV_INBOX_PATH, devInboxLayer, devInboxPolicy } from "./devInbox.js"
import { assembleApi, type Feature, type FeatureApi } from "./Feature.js"
import { health } from "./features/health/handlers.js"
import { hostedLayer, hostedPaths, hostedPolicy, noHostedPages, returnUrl } from "./hosted/hosted.js"
import { METRICS_PATH, type MetricsText, metricsRoute } from "./metrics.js"
import { docsPolicy, noRouteResponse } from "./middleware.js"
import { servicePipeline } from "./pipeline.js"
import { passkeyRegisterLimit, unlimitedPaths } from "./rateLimits.js"
import { type LimitedRoute, type RouteCatalog, routeCatalog } from "./routes.js"
import { redactedSpanHeaders } from "./tracing.js"

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
  /** Serve /dev/inbox: the mailer is the development inbox (MAILER=dev). */
  readonly devInbox?: boolean
}

/** The API of the groups served, the health group with them. */
export const servedApi = (served: Served<FeatureApi<unknown>>, settings: Settings) =>
  assembleApi([...served.parts, health], {
    publicUrl: settings.server.publicUrl,
    globallyLimited: (path) => Option.isSome(settings.limits.globalRateLimit) && !unlimitedPaths.has(path),
    originChecked: settings.cookies.tokenTransport === "cookie"
  })

/**
 * The server of the router the API and the pages beside it fill (HttpApiBuilder's Router), each
 * of its routes behind the pipeline, and the router completed so that every request resolves to
 * one of them (routes.ts): the platform resolves each request's route once, and the pipeline's
 * steps read it.
 */
export const serveRouted = <E, R>(
  routes: RouteCatalog,
  pipeline: Effect.Effect<(handler: HttpApp.Default) => HttpApp.Default, E, R>
) =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const router = yield* HttpApiBuilder.Router.router
      const steps = yield* pipeline
      // find-my-way folds `//` to `/` over the whole target, its query too, so an unencoded
      // `redirect_uri=http://localhost…` would arrive as `http:/localhost…`: a path with `//` is
      // one no route serves instead.
      const app = yield* HttpRouter.toHttpApp(
        HttpRouter.use(routes.complete(router), (handler) => steps(handler as HttpApp.Default))
      ).pipe(HttpRouter.withRouterConfig({ ignoreDuplicateSlashes: false }))
      // What the router cannot read at all (a malformed escape in a parameter) goes through the
      // steps as a path no route serves.
      const unreadable = steps(Effect.succeed(noRouteResponse))
      return HttpServer.serve(Effect.catchTag(app, "RouteNotFound", () => unreadable))
    })
  ).pipe(Layer.provide(HttpApiBuilder.Router.Live))

/**
 * The HTTP application: the API of the features served with their handlers, the OpenAPI document
 * and docs page under the auth prefix, the demo and hosted pages, all behind the request pipeline
 * (pipeline.ts). A feature left out has no routes and no limits. Needs the use cases and an
 * HttpServer.
 *
 * With `metrics` (METRICS_ENABLED), every request is timed into them, and they are served at
 * /metrics unless METRICS_PORT gives them a port of their own. With spans exported, they are
 * kept free of secret headers and query values.
 */
export const httpLayer = <P extends FeatureApi<unknown>>(
  settings: Settings,
  served: Served<P>,
  metrics?: MetricsText
) => {
  const api = servedApi(served, settings)
  const handlers = Layer.mergeAll(health.handlers, ...served.parts.map((part): P["handlers"] => part.handlers))
  const { authPrefix, demo, hostedPages, productName } = settings.server
  const docsPath = `${authPrefix}/docs`
  const openApiPath = `${authPrefix}/openapi.json`
  const metricsHere = metrics !== undefined && Option.isNone(settings.observability.metricsPort)
  // MAILER=dev, said or chosen by default (composition/adapters.ts mailerKind): its inbox's page.
  const devInbox = served.devInbox === true
  // The GET routes mounted beside the API's, with the policy of those that are pages.
  const pages: ReadonlyArray<readonly [path: string, policy?: string]> = [
    [docsPath, docsPolicy],
    [openApiPath],
    ...(demo ? demoPaths.map((path) => [path, demoPolicy] as const) : []),
    ...(hostedPages ? hostedPaths.map((path) => [path, hostedPolicy] as const) : []),
    ...(metricsHere ? [[METRICS_PATH] as const] : []),
    ...(devInbox ? [[DEV_INBOX_PATH, devInboxPolicy] as const, [DEV_INBOX_LATEST_PATH] as const] : [])
  ]
  const routes = routeCatalog(api, {
    limits: { prefix: authPrefix, routes: served.limits },
    kinds: new Map(served.parts.flatMap((part) => [...(part.kinds ?? [])]))
  })
  const ApiLive = HttpApiBuilder.api(api).pipe(
    Layer.provide(handlers),
    Layer.provide(AccessGuardsLive),
    // The passkey registration routes' per-user bucket (passkey_register), a middleware of theirs.
    Layer.provide(passkeyRegisterLimit(settings)),
    Layer.provide(AuthenticationLive),
    Layer.provide(
      SessionTransport.layer({
        authPrefix,
        ...settings.cookies,
        refreshTokenExpireDays: settings.tokens.refreshTokenExpireDays
      })
    )
  )
  const beside = Layer.mergeAll(
    HttpApiSwagger.layer({ path: docsPath as `/${string}` }),
    HttpApiBuilder.middlewareOpenApi({ path: openApiPath as `/${string}` }),
    demo
      ? demoLayer(authPrefix, {
          emailSignIn: settings.accounts.emailSignInEnabled,
          passkeys: settings.passkeys.passkeyEnabled
        })
      : noDemo,
    hostedPages
      ? hostedLayer({
          authPrefix,
          product: productName,
          passwordMinLength: settings.accounts.passwordMinLength,
          emailSignIn: settings.accounts.emailSignInEnabled,
          returnUrl: returnUrl(settings.server),
          ...(settings.cookies.tokenTransport === "bearer"
            ? {
                bearerSignIn: { handOff: Option.getOrUndefined(Option.map(settings.server.appUrl, (url) => url.href)) }
              }
            : {})
        })
      : noHostedPages,
    metricsHere ? metricsRoute(metrics) : Layer.empty,
    devInbox ? devInboxLayer(productName) : Layer.empty
  )
  const pipeline = servicePipeline(settings, {
    routes,
    documents: [docsPath, openApiPath],
    policies: new Map([
      ...pages.flatMap(([path, policy]) => (policy === undefined ? [] : [[path, policy] as const])),
      ...served.parts.flatMap((part) => [...(part.policies ?? [])])
    ]),
    metrics: metrics !== undefined
  })
  return serveRouted(routes, pipeline).pipe(
    Layer.provide(beside),
    Layer.provide(ApiLive),
    Layer.provide(Option.isSome(settings.observability.otlpEndpoint) ? redactedSpanHeaders : Layer.empty)
  )
}
