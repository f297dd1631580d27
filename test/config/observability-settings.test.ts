import { describe, expect, it } from "@effect/vitest"
import { Either, Option } from "effect"
import { startupWarnings } from "../../composition/startup.js"
import { parseSettings } from "../../config/Settings.js"
import { tracesUrl } from "../../infrastructure/tracing/otlp.js"

const base = { SERVICE_SECRET_KEY: "a-secret-key-of-at-least-32-bytes-long!" }
const resolved = (env: Record<string, string>) => {
  const result = parseSettings({ ...base, ...env })
  if (Either.isLeft(result)) throw new Error(result.left.join("\n"))
  return result.right
}
const problems = (env: Record<string, string>) =>
  Either.getLeft(parseSettings({ ...base, ...env })).pipe(Option.getOrThrow)

describe("observability settings", () => {
  it("metrics and tracing are off by default", () => {
    const { observability } = resolved({}).settings
    expect(observability.metricsEnabled).toBe(false)
    expect(observability.metricsPort).toEqual(Option.none())
    expect(observability.otlpEndpoint).toEqual(Option.none())
    expect(observability.otelServiceName).toBe("portcullis")
  })

  it("reads OpenTelemetry's own variables without the SERVICE_ prefix", () => {
    const { observability } = resolved({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      OTEL_SERVICE_NAME: "auth"
    }).settings
    expect(Option.map(observability.otlpEndpoint, (url) => url.href)).toEqual(Option.some("http://collector:4318/"))
    expect(observability.otelServiceName).toBe("auth")
    expect(resolved({ SERVICE_OTEL_SERVICE_NAME: "auth" }).warnings).toContain(
      "SERVICE_OTEL_SERVICE_NAME is not a Portcullis setting and is ignored"
    )
  })

  it("refuses an endpoint that is not an http(s) URL, naming the variable", () => {
    expect(problems({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toEqual([
      'OTEL_EXPORTER_OTLP_ENDPOINT="collector:4318" has another scheme; expected a URL starting with http:// or https://'
    ])
  })

  it("sends traces to <endpoint>/v1/traces, keeping the endpoint's path", () => {
    expect(tracesUrl(new URL("http://collector:4318"))).toBe("http://collector:4318/v1/traces")
    expect(tracesUrl(new URL("https://otel.example.com/otlp/"))).toBe("https://otel.example.com/otlp/v1/traces")
  })

  it("refuses METRICS_PORT equal to PORT, and warns that it is ignored while metrics are off", () => {
    expect(
      problems({ SERVICE_METRICS_ENABLED: "true", SERVICE_PORT: "9000", SERVICE_METRICS_PORT: "9000" })
    ).toHaveLength(1)
    expect(resolved({ SERVICE_METRICS_PORT: "9464" }).warnings).toContain(
      "SERVICE_METRICS_PORT is ignored: SERVICE_METRICS_ENABLED is false"
    )
  })

  it("warns at start-up when /metrics is public on the API's port, not when it has its own port", () => {
    const onApiPort = resolved({ SERVICE_METRICS_ENABLED: "true" }).settings
    expect(startupWarnings(onApiPort, {}).some((line) => line.includes("METRICS_PORT"))).toBe(true)
    const ownPort = resolved({ SERVICE_METRICS_ENABLED: "true", SERVICE_METRICS_PORT: "9464" }).settings
    expect(startupWarnings(ownPort, {}).some((line) => line.includes("METRICS_PORT"))).toBe(false)
  })
})
