import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Context, Effect, Layer, Metric, MetricBoundaries, MetricLabel, Option } from "effect"

/** Where /metrics is served on the API's own port (METRICS_PORT unset), at the root whatever the auth prefix. */
export const METRICS_PATH = "/metrics"

/** The Prometheus text exposition format's own media type. */
export const metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

/** Every metric of the process as Prometheus text, rendered when asked. */
export type MetricsText = Effect.Effect<string>

export const requestDurations = Metric.histogram(
  "portcullis_http_request_duration_seconds",
  MetricBoundaries.fromIterable([0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]),
  "HTTP requests by method, route (as declared, never the raw path) and status; _count counts them."
)

export const rateLimitRefusals = Metric.counter("portcullis_rate_limit_refusals", {
  description: "Requests refused with 429, by rate-limit bucket (login, register, ..., global).",
  incremental: true
})

export const hashingQueueDepth = Metric.gauge("portcullis_hashing_queue_depth", {
  description: "Requests of this process hashing a password or waiting to (HASHING_QUEUE_LIMIT bounds it)."
})

/** What the pipeline's first step reports of each request once it is answered: its route as declared, never its raw path. */
export type RequestObserver = (method: string, route: string, status: number, milliseconds: number) => void

const knownMethods = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

/**
 * Each request into the duration histogram, labelled by its route as declared, so that no id or
 * token of a path becomes a label. The labels of each (method, route, status) are made once: the
 * metric caches its series by the labels' identity, so a request pays one map lookup and an update.
 */
export const requestObserver = (): RequestObserver => {
  const labels = new Map<string, ReadonlyArray<MetricLabel.MetricLabel>>()
  return (method, route, status, milliseconds) => {
    const verb = knownMethods.has(method) ? method : "OTHER"
    const key = `${verb} ${status} ${route}`
    let tags = labels.get(key)
    if (tags === undefined) {
      tags = [
        MetricLabel.make("method", verb),
        MetricLabel.make("route", route),
        MetricLabel.make("status", String(status))
      ]
      labels.set(key, tags)
    }
    requestDurations.unsafeUpdate(milliseconds / 1000, tags)
  }
}

const metricsResponse = (render: MetricsText) =>
  Effect.map(render, (text) => HttpServerResponse.text(text, { contentType: metricsContentType }))

/** GET /metrics on the API's own port, beside the API's routes (so behind its middleware: headers, access log). */
export const metricsRoute = (render: MetricsText) =>
  HttpApiBuilder.Router.use((router) => router.get(METRICS_PATH, metricsResponse(render)))

/** Where the metrics' own listener listens (METRICS_PORT), when it has one. */
export class MetricsListener extends Context.Tag("http/MetricsListener")<
  MetricsListener,
  { readonly address: Option.Option<HttpServer.Address> }
>() {}

/**
 * The metrics' own listener: GET /metrics and nothing else, outside the API (no auth prefix, no
 * rate limits), for a port that only the scraper reaches. Needs its own HttpServer.
 */
export const metricsListener = (render: MetricsText) => {
  const app = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    request.method === "GET" && request.url.split("?", 1)[0] === METRICS_PATH
      ? metricsResponse(render)
      : Effect.succeed(HttpServerResponse.empty({ status: 404 }))
  )
  return Layer.merge(
    // A scrape every few seconds is no request worth a span.
    HttpServer.serve(app).pipe(
      HttpServer.withLogAddress,
      HttpMiddleware.withTracerDisabledWhen(() => true)
    ),
    Layer.effect(
      MetricsListener,
      Effect.map(HttpServer.HttpServer, (server) => ({ address: Option.some(server.address) }))
    )
  )
}
