import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel } from "effect"
import * as FlatLines from "../../infrastructure/logging/flatLines.js"
import { call, login, password, uniqueEmail } from "../support/flows.js"
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
      "one line a request: method, path without its query, status, duration, client; no token, no password",
      () =>
        Effect.gen(function* () {
          const app = yield* TestApp.TestApp
          lines.length = 0
          const token = "eyJhbGciOiJIUzI1NiJ9.mailed-secret-token.signature"
          yield* app.request("GET", `/verify-email?token=${token}`, { headers: { "x-forwarded-for": "203.0.113.5" } })
          const email = uniqueEmail()
          yield* call("POST", "/register", { json: { email, password } })
          yield* login(email, password)
          const requests = lines.filter((line) => line.msg === "http request")
          expect(requests).toHaveLength(3)
          expect(requests[0]).toMatchObject({
            method: "GET",
            path: "/verify-email",
            status: 200,
            client_address: "203.0.113.5"
          })
          expect(typeof requests[0]?.duration_ms).toBe("number")
          expect(requests[0]?.request_id).toMatch(/^[0-9a-f-]{36}$/)
          expect(requests[2]).toMatchObject({ method: "POST", path: "/api/v1/auth/login", status: 200 })
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
