import * as HttpServer from "@effect/platform/HttpServer"
import * as OpenApi from "@effect/platform/OpenApi"
import { Duration, Effect, Layer, Option } from "effect"
import { pruneEvery } from "../application/Pruning.js"
import { deliverEvery } from "../application/WebhookDelivery.js"
import type { Deployment } from "../config/Deployment.js"
import type { Settings } from "../config/Settings.js"
import type { MetricsText } from "../interfaces/http/metrics.js"
import { httpLayer, keptFeatures, servedApi, servedFeatures } from "../interfaces/http/server.js"
import { mailerKind } from "./adapters.js"
import { application } from "./application.js"
import { features } from "./features.js"
import { metricsPortLayer, metricsText, tracing } from "./observability.js"

/**
 * What the deployment serves of the table: the routes of the features it keeps that their settings
 * turn on, shaped by its settings and code; the limits of every feature it keeps, so that a route
 * answers the same 429 whether its feature is turned on or not.
 */
const served = (settings: Settings, deployment: Deployment) => ({
  parts: servedFeatures(features, settings, deployment).map((feature) => feature.api({ settings, deployment })),
  limits: keptFeatures(features, deployment).flatMap((feature) => feature.limits),
  devInbox: mailerKind(settings) === "dev"
})

/** The deployment's HTTP API, timing its requests into `metrics` when given; needs the application and an HttpServer. */
export const http = (settings: Settings, deployment: Deployment = {}, metrics?: MetricsText) =>
  httpLayer(settings, served(settings, deployment), metrics)

/** The OpenAPI document of what the deployment serves. */
export const openApiDocument = (settings: Settings, deployment: Deployment = {}) =>
  OpenApi.fromApi(servedApi(served(settings, deployment), settings))

/**
 * The whole service on `server`: the HTTP API over the application, its metrics (on their own
 * port when METRICS_PORT is set) and its tracing. The use cases and ports stay exposed (tests
 * arrange through them), and where the metrics listen; `overrides` replace some adapters.
 */
export const service = <S, E, R, A = never, EO = never, RO = never>(
  settings: Settings,
  deployment: Deployment,
  server: Layer.Layer<HttpServer.HttpServer | S, E, R>,
  overrides?: Layer.Layer<A, EO, RO>
) =>
  Layer.unwrapEffect(
    Effect.map(metricsText(settings), (metrics) =>
      Layer.mergeAll(
        // The sweeps and the webhooks' deliverer start once the server listens: a backlog never
        // delays serving.
        Layer.merge(
          pruneEvery(Duration.seconds(settings.storage.pruneIntervalSeconds)),
          deliverEvery(
            Duration.seconds(1),
            settings.webhooks.endpoints.length > 0 || settings.storage.databaseUrl.kind !== "memory"
          )
        ).pipe(
          Layer.provideMerge(
            http(settings, deployment, Option.getOrUndefined(metrics)).pipe(
              HttpServer.withLogAddress,
              Layer.provide(server)
            )
          )
        ),
        metricsPortLayer(settings, metrics)
      )
    )
  ).pipe(Layer.provideMerge(application(settings, deployment, overrides)), Layer.provide(tracing(settings)))
