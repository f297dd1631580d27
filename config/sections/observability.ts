import { Option } from "effect"
import * as F from "../forms.js"
import { PREFIX, type SettingsReader } from "../reader.js"

/**
 * Metrics (Prometheus text at /metrics) and tracing (OpenTelemetry over OTLP/HTTP). The
 * OpenTelemetry variables keep their own names, without the prefix, as every OpenTelemetry SDK
 * and collector documents them.
 */
export const readObservability = (read: SettingsReader, mainPort: number) => {
  const metricsEnabled = read.setting("METRICS_ENABLED", F.bool, false, {
    doc: "Serve Prometheus text at `/metrics`: on the API's port, or on METRICS_PORT alone when set. Unauthenticated: keep it off the public network."
  })
  const metricsPort = read.optional("METRICS_PORT", F.int(0, 65_535), {
    doc: "Serve `/metrics` on this port only (an internal network), not on the API's; 0 picks a free port."
  })
  if (Option.isSome(metricsPort)) {
    if (!metricsEnabled) read.warn(`${PREFIX}METRICS_PORT is ignored: ${PREFIX}METRICS_ENABLED is false`)
    else if (metricsPort.value !== 0 && metricsPort.value === mainPort) {
      read.problem(
        `${PREFIX}METRICS_PORT=${metricsPort.value} is the API's own port; expected another port, or leave it unset to serve /metrics on the API's port`
      )
    }
  }
  return {
    metricsEnabled,
    /** Serve /metrics on this port only (not on the API's); unset: on the API's port. */
    metricsPort,
    /** The OTLP/HTTP base URL: spans are sent to `<endpoint>/v1/traces`. Unset: no tracing. */
    otlpEndpoint: read.standard("OTEL_EXPORTER_OTLP_ENDPOINT", F.url("http:", "https:"), {
      doc: "OpenTelemetry's own variable, without the prefix: the OTLP/HTTP base URL spans are sent to (`<endpoint>/v1/traces`). Unset: no tracing; neither the server nor the use cases make a span."
    }),
    otelServiceName: Option.getOrElse(
      read.standard("OTEL_SERVICE_NAME", F.text, {
        doc: "OpenTelemetry's own variable, without the prefix: the service name spans carry (default `portcullis`)."
      }),
      () => "portcullis"
    )
  }
}

export type ObservabilitySettings = ReturnType<typeof readObservability>
