import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { describe, expect, it } from "@effect/vitest"
import { type Context, Effect, FiberRef, Layer, Tracer } from "effect"
import * as Logging from "../../composition/logging.js"
import { tracing } from "../../composition/observability.js"
import { login, me, signUp } from "../support/flows.js"
import * as TestApp from "../support/TestApp.js"

interface OtlpValue {
  readonly stringValue?: string
  readonly intValue?: number | string
}
interface OtlpSpan {
  readonly name: string
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: OtlpValue }>
}
interface OtlpTraces {
  readonly resourceSpans: ReadonlyArray<{
    readonly scopeSpans: ReadonlyArray<{ readonly spans: ReadonlyArray<OtlpSpan> }>
  }>
}

/** A local OTLP/HTTP receiver: every JSON body POSTed to /v1/traces, as it came. */
const receiver = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly bodies: Array<string>; readonly server: Server }>((resume) => {
    const bodies: Array<string> = []
    const server = createServer((request, response) => {
      let body = ""
      request.on("data", (chunk: Buffer) => {
        body += chunk.toString("utf8")
      })
      request.on("end", () => {
        if (request.method === "POST" && request.url === "/v1/traces") bodies.push(body)
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, bodies, server }))
    })
  }),
  ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
)

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((entry) => entry.key === key)?.value
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue))
}

describe("tracing (OTEL_EXPORTER_OTLP_ENDPOINT)", () => {
  it.scopedLive("a request's span reaches the collector with its route and status, and no secret", () =>
    Effect.gen(function* () {
      const collector = yield* receiver
      const settings = TestApp.settingsFor({
        SERVICE_SECRET_KEY: TestApp.testSecretKey,
        SERVICE_DATABASE_URL: "memory:",
        SERVICE_LOG_LEVEL: "none",
        SERVICE_AUTH_RATE_LIMIT_ENABLED: "false",
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_SERVICE_NAME: "portcullis-under-test"
      })
      const mailedToken = "mailed-secret-token-value"
      // The service runs in its own scope: closing it flushes the batch of spans.
      const session = yield* Effect.scoped(
        Effect.gen(function* () {
          const context = yield* Layer.build(
            TestApp.serve(settings).pipe(Layer.provide(Logging.layer(settings.logging)))
          )
          return yield* Effect.gen(function* () {
            const app = yield* TestApp.TestApp
            const session = yield* signUp()
            expect((yield* me(session.access)).status).toBe(200)
            expect((yield* login(session.email, "a wrong password")).status).toBe(401)
            yield* app.request("GET", `/verify-email?token=${mailedToken}`)
            return session
          }).pipe(Effect.provide(context as Context.Context<TestApp.TestApp>))
        })
      )
      const exported = collector.bodies.join("\n")
      expect(exported).not.toContain(session.access)
      expect(exported).not.toContain(session.refresh)
      expect(exported).not.toContain(mailedToken)
      const spans = collector.bodies.flatMap((body) =>
        (JSON.parse(body) as OtlpTraces).resourceSpans.flatMap((resource) =>
          resource.scopeSpans.flatMap((scope) => scope.spans)
        )
      )
      const prefix = settings.server.authPrefix
      const meSpan = spans.find((span) => attribute(span, "http.route") === `${prefix}/me`)
      expect(meSpan).toBeDefined()
      if (meSpan === undefined) return
      expect(attribute(meSpan, "http.response.status_code")).toBe(200)
      expect(attribute(meSpan, "http.request.method")).toBe("GET")
      expect(attribute(meSpan, "http.request.header.authorization")).toBe("<redacted>")
      const pageSpan = spans.find((span) => attribute(span, "url.path") === "/verify-email")
      expect(pageSpan).toBeDefined()
      if (pageSpan === undefined) return
      expect(attribute(pageSpan, "url.query")).toBe("token=REDACTED")
      expect(attribute(pageSpan, "url.full")).toMatch(/\/verify-email\?token=REDACTED$/)
      // The use cases' own spans (Effect.fn) ride along.
      expect(spans.map((span) => span.name)).toContain("PasswordSignIn.login")
      expect(exported).toContain("portcullis-under-test")
    })
  )
})

describe("tracing without OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  it.scopedLive("is off: serving a sign-up and a request makes no span at all, so costs nothing", () =>
    Effect.gen(function* () {
      const native = yield* Effect.tracer
      const started: Array<string> = []
      // Effect's own tracer, noting each span asked of it: with the tracer off, none is.
      const noting = Tracer.make({
        span: (name, ...rest) => {
          started.push(name)
          return native.span(name, ...rest)
        },
        context: (f, fiber) => native.context(f, fiber)
      })
      const settings = TestApp.settingsFor({
        SERVICE_SECRET_KEY: TestApp.testSecretKey,
        SERVICE_DATABASE_URL: "memory:",
        SERVICE_LOG_LEVEL: "none"
      })
      const context = yield* Layer.build(
        TestApp.serve(settings).pipe(
          Layer.provide(Logging.layer(settings.logging)),
          Layer.provide(Layer.setTracer(noting))
        )
      )
      yield* Effect.gen(function* () {
        const session = yield* signUp()
        expect((yield* me(session.access)).status).toBe(200)
      }).pipe(Effect.provide(context as Context.Context<TestApp.TestApp>))
      expect(started).toEqual([])
    })
  )
})

describe("the HTTP server's tracing middleware", () => {
  const request = HttpServerRequest.fromWeb(new Request("http://127.0.0.1/healthz"))
  /** Whether the middleware is skipped for a request under the tracing layer of these settings. */
  const disabledFor = (otlp: Record<string, string>) =>
    Effect.scoped(
      Effect.gen(function* () {
        const settings = TestApp.settingsFor({ SERVICE_SECRET_KEY: TestApp.testSecretKey, ...otlp })
        yield* Layer.build(tracing(settings))
        const disabledWhen = yield* FiberRef.get(HttpMiddleware.currentTracerDisabledWhen)
        return disabledWhen(request)
      })
    )

  it.effect("is skipped when no span is exported: it would parse, copy and redact each request for nothing", () =>
    Effect.map(disabledFor({}), (disabled) => expect(disabled).toBe(true))
  )

  it.effect("runs when spans are exported", () =>
    Effect.map(disabledFor({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }), (disabled) =>
      expect(disabled).toBe(false)
    )
  )
})
