import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import * as FlatLines from "../../infrastructure/logging/flatLines.js"
import { call, expectProblem, login, register, uniqueEmail } from "../support/flows.js"
import * as TestApp from "../support/TestApp.js"

const APP = "https://app.example.com"
const LOCAL = "http://localhost:5173"
const FOREIGN = "https://evil.example.net"

/** The CORS headers of a reply, for the cases where there must be none. */
const corsHeaders = (reply: TestApp.Reply) => {
  const names: Array<string> = []
  reply.headers.forEach((_value, name) => {
    if (name.startsWith("access-control-")) names.push(name)
  })
  return names
}

const preflight = (path: string, origin: string, method = "POST", headers = "content-type,x-csrf-token") =>
  call("OPTIONS", path, {
    headers: { origin, "access-control-request-method": method, "access-control-request-headers": headers }
  })

const listed = (value: string | null) => (value ?? "").split(",").map((item) => item.trim().toLowerCase())

for (const backend of TestApp.backends) {
  // One origin and two: HttpMiddleware.cors, for one, would send it to every caller.
  for (const origins of [[APP], [APP, LOCAL]]) {
    describe(`CORS with CORS_ORIGINS=${origins.join(",")} (${backend.name})`, () => {
      layer(
        TestApp.layer(backend, {
          SERVICE_CORS_ORIGINS: origins.join(","),
          SERVICE_TOKEN_TRANSPORT: "cookie",
          SERVICE_COOKIE_SECURE: "false"
        }),
        { excludeTestServices: true }
      )((it) => {
        it.effect("an allowed origin gets itself back with credentials allowed, on successes and problems alike", () =>
          Effect.gen(function* () {
            for (const origin of origins) {
              const email = uniqueEmail()
              yield* register(email)
              const reply = yield* login(email, undefined, { origin })
              expect(reply.status).toBe(200)
              expect(reply.headers.get("access-control-allow-origin")).toBe(origin)
              expect(reply.headers.get("access-control-allow-credentials")).toBe("true")
              expect(listed(reply.headers.get("vary"))).toContain("origin")
              expect(listed(reply.headers.get("access-control-expose-headers"))).toEqual(
                expect.arrayContaining(["x-csrf-token", "retry-after", "x-request-id", "www-authenticate"])
              )
              const problem = yield* call("GET", "/me", { headers: { origin } })
              expectProblem(problem, 401, "TokenError")
              expect(problem.headers.get("access-control-allow-origin")).toBe(origin)
              expect(problem.headers.get("access-control-allow-credentials")).toBe("true")
            }
          })
        )

        it.effect("a preflight from an allowed origin answers 204 with the route's methods and the headers", () =>
          Effect.gen(function* () {
            const reply = yield* preflight("/refresh", APP)
            expect(reply.status).toBe(204)
            expect(reply.text).toBe("")
            expect(reply.headers.get("access-control-allow-origin")).toBe(APP)
            expect(reply.headers.get("access-control-allow-credentials")).toBe("true")
            expect(listed(reply.headers.get("access-control-allow-methods"))).toEqual(["post"])
            expect(listed(reply.headers.get("access-control-allow-headers"))).toEqual(
              expect.arrayContaining(["x-csrf-token", "authorization", "content-type"])
            )
            expect(Number(reply.headers.get("access-control-max-age"))).toBeGreaterThan(0)
            expect(reply.headers.get("x-content-type-options")).toBe("nosniff")

            const me = yield* preflight("/me", APP, "PATCH", "authorization,content-type")
            expect(me.status).toBe(204)
            expect(listed(me.headers.get("access-control-allow-methods"))).toEqual(
              expect.arrayContaining(["get", "patch", "delete"])
            )
          })
        )

        it.effect("a preflight for a route that does not exist is still 404", () =>
          Effect.gen(function* () {
            expectProblem(yield* preflight("/no-such-route", APP), 404, "NotFoundError")
          })
        )

        it.effect("a foreign origin gets no CORS header, and its preflight is not granted", () =>
          Effect.gen(function* () {
            const email = uniqueEmail()
            yield* register(email)
            // Cookie mode refuses its unsafe requests outright (test/http/origin-check), without CORS headers.
            const reply = yield* login(email, undefined, { origin: FOREIGN })
            expectProblem(reply, 403, "CsrfError")
            expect(corsHeaders(reply)).toEqual([])
            const problem = yield* call("GET", "/me", { headers: { origin: FOREIGN } })
            expect(corsHeaders(problem)).toEqual([])
            const refused = yield* preflight("/refresh", FOREIGN)
            expectProblem(refused, 405, "MethodNotAllowedError")
            expect(corsHeaders(refused)).toEqual([])
            // Origins are compared whole: scheme, host and port.
            for (const near of ["http://app.example.com", "https://app.example.com:8443", "null"]) {
              expect(corsHeaders(yield* preflight("/refresh", near))).toEqual([])
            }
          })
        )

        it.effect("a request without Origin, and an OPTIONS that is no preflight, are untouched", () =>
          Effect.gen(function* () {
            const plain = yield* call("GET", "/me")
            expect(corsHeaders(plain)).toEqual([])
            const options = yield* call("OPTIONS", "/refresh", { headers: { origin: APP } })
            expectProblem(options, 405, "MethodNotAllowedError")
          })
        )
      })
    })
  }

  describe(`no CORS_ORIGINS (${backend.name})`, () => {
    layer(TestApp.layer(backend), { excludeTestServices: true })((it) => {
      it.effect("no origin gets CORS headers and a preflight is a 405 as any OPTIONS", () =>
        Effect.gen(function* () {
          const reply = yield* call("GET", "/me", { headers: { origin: APP } })
          expect(corsHeaders(reply)).toEqual([])
          expect(reply.headers.get("vary")).toBeNull()
          const refused = yield* preflight("/refresh", APP)
          expectProblem(refused, 405, "MethodNotAllowedError")
          expect(corsHeaders(refused)).toEqual([])
        })
      )
    })
  })
}

/** Each line logged, as the json and logfmt formats have it. */
const logged: Array<FlatLines.FlatRecord> = []
const capture = Logger.replace(
  Logger.defaultLogger,
  Logger.make((options) => {
    logged.push(FlatLines.flatRecord(options))
  })
)
const refusals = () => logged.filter((line) => line.msg === "CORS preflight refused")

/** A service whose log is captured, with these CORS_ORIGINS. */
const logging = (origins: string) =>
  TestApp.serve(
    TestApp.settingsFor({
      SERVICE_SECRET_KEY: TestApp.testSecretKey,
      SERVICE_DATABASE_URL: "memory:",
      SERVICE_CORS_ORIGINS: origins
    })
  ).pipe(Layer.provide(capture))

describe("a refused preflight is logged with why (operators saw a bare 405)", () => {
  layer(logging(APP), { excludeTestServices: true })((it) => {
    it.effect("an origin not allowed, a method the route does not serve, a header not allowed", () =>
      Effect.gen(function* () {
        logged.length = 0
        expectProblem(yield* preflight("/refresh", FOREIGN), 405, "MethodNotAllowedError")
        expect((yield* preflight("/refresh", APP, "PUT", "content-type")).status).toBe(204)
        expect((yield* preflight("/refresh", APP, "POST", "content-type,x-debug-token")).status).toBe(204)
        expect(refusals()).toEqual([
          expect.objectContaining({ reason: "origin not allowed", origin: FOREIGN, method: "POST" }),
          expect.objectContaining({ reason: "method not allowed", origin: APP, method: "PUT", allowed: "POST" }),
          expect.objectContaining({ reason: "header not allowed", origin: APP, headers: "x-debug-token" })
        ])
        // Each carries its request's id, as the access line of the same request does.
        for (const line of refusals()) expect(line.request_id).toMatch(/^[0-9a-f-]{36}$/)
      })
    )

    it.effect("a granted preflight, a plain request and an OPTIONS that is no preflight log no refusal", () =>
      Effect.gen(function* () {
        logged.length = 0
        expect((yield* preflight("/refresh", APP)).status).toBe(204)
        expect((yield* preflight("/me", APP, "PATCH", "Authorization, Content-Type, Accept")).status).toBe(204)
        yield* call("GET", "/me", { headers: { origin: FOREIGN } })
        yield* call("OPTIONS", "/refresh", { headers: { origin: FOREIGN } })
        expect(refusals()).toEqual([])
      })
    )

    it.effect("a foreign origin as sent is logged bounded", () =>
      Effect.gen(function* () {
        logged.length = 0
        yield* preflight("/refresh", `https://${"a".repeat(5_000)}.example`)
        const [line] = refusals()
        expect(String(line?.origin).length).toBeLessThanOrEqual(201)
      })
    )
  })

  layer(logging(""), { excludeTestServices: true })((it) => {
    it.effect("with no CORS_ORIGINS every preflight is refused for its origin, and logged so", () =>
      Effect.gen(function* () {
        logged.length = 0
        expectProblem(yield* preflight("/refresh", APP), 405, "MethodNotAllowedError")
        expect(refusals()).toEqual([expect.objectContaining({ reason: "origin not allowed", origin: APP })])
      })
    )
  })
})
