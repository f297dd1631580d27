import { createServer } from "node:http"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import type { Settings } from "../config/Settings.js"
import { prometheusText } from "../infrastructure/metrics/prometheus.js"
import { otlpTracing } from "../infrastructure/tracing/otlp.js"
import { MetricsListener, type MetricsText, metricsListener } from "../interfaces/http/metrics.js"

/**
 * Spans exported over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set; otherwise the tracer is off,
 * since spans would cost every request a few allocations and nothing would read them.
 */
export const tracing = (settings: Settings) =>
  Option.match(settings.observability.otlpEndpoint, {
    onNone: () => Layer.setTracerEnabled(false),
    onSome: (endpoint) => otlpTracing({ endpoint, serviceName: settings.observability.otelServiceName })
  })

/** The metrics as text when METRICS_ENABLED; none otherwise, and nothing is timed. */
export const metricsText = (settings: Settings): Effect.Effect<Option.Option<MetricsText>> =>
  settings.observability.metricsEnabled ? Effect.asSome(prometheusText) : Effect.succeedNone

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
