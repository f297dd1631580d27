import { createServer } from "node:http"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer, Option } from "effect"
import { constTrue } from "effect/Function"
import type { Settings } from "../config/Settings.js"
import { MetricsListener, type MetricsText, metricsListener } from "../interfaces/http/metrics.js"

/**
 * Spans exported over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set; otherwise the tracer is off,
 * since spans would cost every request a few allocations and nothing would read them. The HTTP
 * server's own tracing middleware is then skipped as well: with the tracer off it would still
 * parse each request's URL, copy its headers to redact them and open a span that goes nowhere.
 * The OpenTelemetry SDK is imported only when spans are exported: it is a good part of a second
 * of start-up.
 */
export const tracing = (settings: Settings) =>
  Option.match(settings.observability.otlpEndpoint, {
    onNone: () =>
      Layer.merge(
        Layer.setTracerEnabled(false),
        Layer.locallyScoped(HttpMiddleware.currentTracerDisabledWhen, constTrue)
      ),
    onSome: (endpoint) =>
      Layer.unwrapEffect(
        Effect.map(
          Effect.promise(() => import("../infrastructure/tracing/otlp.js")),
          ({ otlpTracing }) => otlpTracing({ endpoint, serviceName: settings.observability.otelServiceName })
        )
      )
  })

/**
 * The metrics as text when METRICS_ENABLED, their OpenTelemetry serializer imported only then;
 * none otherwise, and nothing is timed.
 */
export const metricsText = (settings: Settings): Effect.Effect<Option.Option<MetricsText>> =>
  settings.observability.metricsEnabled
    ? Effect.promise(() => import("../infrastructure/metrics/prometheus.js")).pipe(
        Effect.flatMap(({ prometheusText }) => Effect.asSome(prometheusText))
      )
    : Effect.succeedNone

/** The metrics' own listener on METRICS_PORT (the API's HOST), when they have one. */
export const metricsPortLayer = (settings: Settings, metrics: Option.Option<MetricsText>) => {
  const { metricsPort } = settings.observability
  if (Option.isNone(metrics) || Option.isNone(metricsPort)) {
    return Layer.succeed(MetricsListener, { address: Option.none() })
  }
  return metricsListener(metrics.value).pipe(
    Layer.provide(NodeHttpServer.layer(createServer, { host: settings.server.host, port: metricsPort.value }))
  )
}
