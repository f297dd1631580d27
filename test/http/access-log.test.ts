import { randomUUID } from "node:crypto"
import { afterEach, describe, expect, it, layer, vi } from "@effect/vitest"
import { Context, Effect, Layer, Logger, LogLevel } from "effect"
import * as Logging from "../../composition/logging.js"
import * as FlatLines from "../../infrastructure/logging/flatLines.js"
import { call, login, password, uniqueEmail } from "../support/flows.js"
import { killAll, startServer } from "../support/processes.js"
import * as TestApp from "../support/TestApp.js"

/** Each line as the json and logfmt formats write it. */
const lines: Array<FlatLines.FlatRecord> = []
const capture = Logger.replace(
  Logger.defaultLogger,
  Logger.make((options) => {
    lines.push(FlatLines.flatRecord(options))
  })
)

const service = TestApp.serve(
  TestApp.settingsFor({
    SERVICE_SECRET_KEY: TestApp.testSecretKey,
    SERVICE_DATABASE_URL: "memory:",
    SERVICE_TRUSTED_PROXY_HEADERS: "x-forwarded-for"
  })
).pipe(Layer.provide(capture), Layer.provide(Logger.minimumLogLevel(LogLevel.Debug)))

describe("the access log", () => {
  layer(service, { excludeTestServices: true })((it) => {
    it.effect(
      "one line a request: method, route, path without its query, status, duration, client, user agent; no token, no password",
      () =>
        Effect.gen(function* () {
          const app = yield* TestApp.TestApp
          lines.length = 0
          const token = "eyJhbGciOiJIUzI1NiJ9.mailed-secret-token.signature"
          yield* app.request("GET", `/verify-email?token=${token}`, {
            headers: { "x-forwarded-for": "203.0.113.5", "user-agent": "access-log-test/1.0" }
          })
          const email = uniqueEmail()
          yield* call("POST", "/register", { json: { email, password } })
          yield* login(email, password)
          const familyId = randomUUID()
          yield* call("DELETE", `/sessions/${familyId}`)
          yield* app.request("GET", `/no-such-route-${familyId}`)
          const requests = lines.filter((line) => line.msg === "http request")
          expect(requests).toHaveLength(5)
          expect(requests[0]).toMatchObject({
            method: "GET",
            route: "/verify-email",
            path: "/verify-email",
            status: 200,
            client_address: "203.0.113.5",
            user_agent: "access-log-test/1.0"
          })
          expect(typeof requests[0]?.duration_ms).toBe("number")
          expect(requests[0]?.request_id).toMatch(/^[0-9a-f-]{36}$/)
          expect(requests[2]).toMatchObject({ method: "POST", route: "/api/v1/auth/login", status: 200 })
          // A path's ids stay in `path`; `route` is the pattern, one value for every session.
          expect(requests[3]).toMatchObject({
            method: "DELETE",
            route: "/api/v1/auth/sessions/:family_id",
            path: `/api/v1/auth/sessions/${familyId}`,
            status: 401
          })
          expect(requests[4]).toMatchObject({ route: "unmatched", path: `/no-such-route-${familyId}`, status: 404 })
          const all = JSON.stringify(lines)
          expect(all).not.toContain("mailed-secret-token")
          expect(all).not.toContain("token=")
          expect(all).not.toContain(password)
        })
    )

    it.effect("health probes log at debug, so that they do not flood the info log", () =>
      Effect.gen(function* () {
        const app = yield* TestApp.TestApp
        lines.length = 0
        yield* app.request("GET", "/healthz")
        yield* app.request("GET", "/readyz")
        const probes = lines.filter((line) => line.msg === "http request")
        expect(probes.map((line) => line.level)).toEqual(["debug", "debug"])
      })
    )
  })
})

/** Standard output's text while `effect` runs, kept off the terminal. */
const stdoutOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const written: Array<string> = []
      const spy = vi.spyOn(process.stdout, "write").mockImplementation((text) => {
        written.push(String(text))
        return true
      })
      return { written, spy }
    }),
    ({ written }) => Effect.as(effect, written),
    ({ spy }) => Effect.sync(() => spy.mockRestore())
  ).pipe(
    Effect.map((written) =>
      written
        .join("")
        .split("\n")
        .filter((line) => line !== "")
    )
  )

/** A request and a health probe to a service logging in `format` at `level`, and the lines they wrote. */
const requestAndProbe = (format: "json" | "logfmt", level: string) => {
  const settings = TestApp.settingsFor({
    SERVICE_SECRET_KEY: TestApp.testSecretKey,
    SERVICE_DATABASE_URL: "memory:",
    SERVICE_LOG_FORMAT: format,
    SERVICE_LOG_LEVEL: level
  })
  return Effect.scoped(
    Effect.gen(function* () {
      const context = yield* Layer.build(TestApp.serve(settings).pipe(Layer.provide(Logging.layer(settings.logging))))
      const app = Context.get(context, TestApp.TestApp)
      return yield* stdoutOf(
        Effect.zipRight(
          app.request("GET", "/no-such-route?secret=q", { headers: { "user-agent": 'agent "seven" = x' } }),
          app.request("GET", "/healthz")
        )
      )
    })
  )
}

describe("the access log in the service's own formats (LOG_FORMAT json or logfmt)", () => {
  it.live("logfmt: the request's line at info, the probe's at debug, values quoted where they must be", () =>
    Effect.gen(function* () {
      const lines = (yield* requestAndProbe("logfmt", "debug")).filter((line) => line.includes('msg="http request"'))
      expect(lines).toHaveLength(2)
      expect(lines[0]).toMatch(
        /^time=\S+ level=info msg="http request" method=GET route=unmatched path=\/no-such-route status=404 duration_ms=\d+ client_address=127\.0\.0\.1 user_agent="agent \\"seven\\" = x" request_id=[0-9a-f-]{36}$/
      )
      expect(lines[1]).toMatch(
        /^time=\S+ level=debug msg="http request" method=GET route=\/healthz path=\/healthz status=200 /
      )
    })
  )

  it.live("at info a probe writes no line; at warning no request does", () =>
    Effect.gen(function* () {
      const atInfo = (yield* requestAndProbe("json", "info")).map((line) => JSON.parse(line) as Record<string, unknown>)
      expect(atInfo.filter((record) => record.msg === "http request").map((record) => record.path)).toEqual([
        "/no-such-route"
      ])
      const atWarning = yield* requestAndProbe("json", "warning")
      expect(atWarning.filter((line) => line.includes("http request"))).toEqual([])
    })
  )
})

describe("the access log of a serving process", () => {
  afterEach(killAll)

  it("is what it writes to stdout: one JSON object a line, the request line among them", async () => {
    const server = await startServer({
      SERVICE_SECRET_KEY: TestApp.testSecretKey,
      SERVICE_DATABASE_URL: "memory:",
      SERVICE_LOG_FORMAT: "json"
    })
    const familyId = randomUUID()
    const reply = await fetch(`${server.url}/api/v1/auth/sessions/${familyId}?token=q7f3b-query-token`, {
      method: "DELETE",
      headers: { "user-agent": "ops-probe/2.0" }
    })
    expect(reply.status).toBe(401)
    await server.stop()
    const records = server
      .output()
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as Record<string, unknown>)
    const requests = records.filter((record) => record.msg === "http request")
    expect(requests).toEqual([
      expect.objectContaining({
        level: "info",
        method: "DELETE",
        route: "/api/v1/auth/sessions/:family_id",
        path: `/api/v1/auth/sessions/${familyId}`,
        status: 401,
        duration_ms: expect.any(Number),
        client_address: "127.0.0.1",
        user_agent: "ops-probe/2.0",
        request_id: reply.headers.get("x-request-id")
      })
    ])
    expect(Object.keys(requests[0] ?? {}).slice(0, 3)).toEqual(["time", "level", "msg"])
    expect(server.output()).not.toContain("q7f3b")
  })
})
