import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base"

export interface OtlpTracingOptions {
  /** The OTLP/HTTP base URL (OTEL_EXPORTER_OTLP_ENDPOINT): spans go to `<endpoint>/v1/traces`. */
  readonly endpoint: URL
  readonly serviceName: string
}

/** Where a base endpoint takes traces, as the OTLP specification derives it (the base's path kept). */
export const tracesUrl = (endpoint: URL) => `${endpoint.href.replace(/\/?$/, "/")}v1/traces`

/**
 * Effect's spans exported to an OpenTelemetry collector over OTLP/HTTP (JSON), in batches: a
 * request never waits for the collector, and a collector that is down loses spans, not requests.
 * The batch is flushed when the service stops. The exporter reads OpenTelemetry's own variables
 * for what is not set here (OTEL_EXPORTER_OTLP_HEADERS for a collector's credentials,
 * OTEL_BSP_* for the batching).
 */
export const otlpTracing = (options: OtlpTracingOptions) =>
  NodeSdk.layer(() => ({
    resource: { serviceName: options.serviceName },
    spanProcessor: new BatchSpanProcessor(new OTLPTraceExporter({ url: tracesUrl(options.endpoint) }))
  }))
