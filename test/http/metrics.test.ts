import { randomUUID } from "node:crypto"
import { describe, expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Ref } from "effect"
import { MetricsListener } from "../../interfaces/http/metrics.js"
import { call, expectProblem, login, me, refresh, signUp, uniqueEmail } from "../support/flows.js"
import { makeGatedHasher } from "../support/gatedHasher.js"
import { parseSamples, sampleOf } from "../support/prometheus.js"
import * as TestApp from "../support/TestApp.js"

const wrong = "not the password at all"

/** The service's metrics as a scraper reads them from the API's own port. */
const scrape = Effect.gen(function* () {
  const app = yield* TestApp.TestApp
  const reply = yield* app.request("GET", "/metrics")
  expect(reply.status).toBe(200)
  expect(reply.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/)
  return parseSamples(reply.text)
})

/** How much each series moved while `effect` ran. */
const moved = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  series: ReadonlyArray<readonly [string, Readonly<Record<string, string>>?]>
) =>
  Effect.gen(function* () {
    const before = yield* scrape
    yield* effect
    const after = yield* scrape
    return series.map(([name, labels]) => sampleOf(after, name, labels) - sampleOf(before, name, labels))
  })

const durations = "portcullis_http_request_duration_seconds"
const requests = `${durations}_count`

describe("metrics on the API's port (METRICS_ENABLED=true)", () => {
  layer(
    TestApp.layer("memory:", {
      SERVICE_METRICS_ENABLED: "true",
      SERVICE_AUTH_RATE_LIMIT_ENABLED: "true",
      SERVICE_AUTH_RATE_LIMITS: JSON.stringify({
        login: "1000/minute",
        register: "1000/minute",
        refresh: "1000/minute",
        password_reset: "1/minute"
      })
    }),
    { excludeTestServices: true }
  )((it) => {
    it.effect("a sign-in and a failed one each move their series", () =>
      Effect.gen(function* () {
        const user = yield* signUp()
        const signIns = ["portcullis_sign_ins_total", { method: "password" }] as const
        const failures = [
          "portcullis_sign_in_failures_total",
          { method: "password", reason: "AuthenticationError" }
        ] as const
        expect(yield* moved(login(user.email), [signIns, failures])).toEqual([1, 0])
        expect(yield* moved(login(user.email, wrong), [signIns, failures])).toEqual([0, 1])
      })
    )

    it.effect("a lockout and the attempts it refuses are counted", () =>
      Effect.gen(function* () {
        const email = uniqueEmail("locked")
        const lockouts = ["portcullis_lockouts_total"] as const
        const locked = [
          "portcullis_sign_in_failures_total",
          { method: "password", reason: "AccountLockedError" }
        ] as const
        const failing = Effect.forEach([1, 2, 3, 4, 5], () => login(email, wrong), { discard: true })
        expect(yield* moved(failing, [lockouts, locked])).toEqual([1, 0])
        expect(yield* moved(login(email, wrong), [lockouts, locked])).toEqual([0, 1])
      })
    )

    it.effect("a 429 is counted by its bucket", () =>
      Effect.gen(function* () {
        const ask = call("POST", "/password-reset/request", { json: { email: uniqueEmail() } })
        const refusals = ["portcullis_rate_limit_refusals_total", { bucket: "password_reset" }] as const
        const [counted] = yield* moved(
          Effect.gen(function* () {
            yield* ask
            expectProblem(yield* ask, 429, "RateLimitedError")
          }),
          [refusals]
        )
        expect(counted).toBe(1)
      })
    )

    it.effect("a refresh token presented again is counted as reuse", () =>
      Effect.gen(function* () {
        const session = yield* signUp()
        expect((yield* refresh(session.refresh)).status).toBe(200)
        const [reused] = yield* moved(
          Effect.map(refresh(session.refresh), (reply) => expect(reply.status).toBe(401)),
          [["portcullis_refresh_reuse_detections_total"]]
        )
        expect(reused).toBe(1)
      })
    )

    it.effect("requests are counted by route pattern and status, never by raw path", () =>
      Effect.gen(function* () {
        const session = yield* signUp()
        const familyId = randomUUID()
        const app = yield* TestApp.TestApp
        const prefix = app.settings.server.authPrefix
        const counts = yield* moved(
          Effect.gen(function* () {
            expect((yield* me(session.access)).status).toBe(200)
            yield* call("DELETE", `/sessions/${familyId}`, { token: session.access })
            yield* app.request("GET", `/no-such-route-${familyId}`)
          }),
          [
            [requests, { method: "GET", route: `${prefix}/me`, status: "200" }],
            [requests, { method: "DELETE", route: `${prefix}/sessions/:family_id`, status: "404" }],
            [requests, { method: "GET", route: "unmatched", status: "404" }]
          ]
        )
        expect(counts).toEqual([1, 1, 1])
        const text = (yield* app.request("GET", "/metrics")).text
        expect(text).not.toContain(familyId)
        expect(text).not.toContain(session.access)
      })
    )

    it.effect("a request's duration lands in the histogram's buckets and its sum, not only its count", () =>
      Effect.gen(function* () {
        const session = yield* signUp()
        const app = yield* TestApp.TestApp
        const series = { method: "GET", route: `${app.settings.server.authPrefix}/me`, status: "200" }
        const [count, infinite, tenSeconds, sum] = yield* moved(
          Effect.map(me(session.access), (reply) => expect(reply.status).toBe(200)),
          [
            [requests, series],
            [`${durations}_bucket`, { ...series, le: "+Inf" }],
            [`${durations}_bucket`, { ...series, le: "10" }],
            [`${durations}_sum`, series]
          ]
        )
        expect(count).toBe(1)
        // Buckets are cumulative: a request well under ten seconds is in that bucket and every larger one.
        expect(infinite).toBe(1)
        expect(tenSeconds).toBe(1)
        expect(sum).toBeGreaterThan(0)
        expect(sum).toBeLessThan(10)
      })
    )

    it.effect("the process's own figures come with them", () =>
      Effect.gen(function* () {
        const samples = yield* scrape
        expect(sampleOf(samples, "process_resident_memory_bytes")).toBeGreaterThan(0)
        expect(sampleOf(samples, "process_cpu_seconds_total")).toBeGreaterThan(0)
      })
    )
  })
})

const { gate, entered, layer: GatedHasher } = makeGatedHasher()

describe("the hashing queue's depth", () => {
  layer(TestApp.layer("memory:", { SERVICE_METRICS_ENABLED: "true" }, { overrides: GatedHasher }), {
    excludeTestServices: true
  })((it) => {
    it.effect("counts the sign-ins waiting on a password check, and falls back once they are done", () =>
      Effect.gen(function* () {
        const depth = "portcullis_hashing_queue_depth"
        const waiting = yield* Effect.fork(
          Effect.all([login(uniqueEmail(), wrong), login(uniqueEmail(), wrong)], { concurrency: "unbounded" })
        )
        while ((yield* Ref.get(entered)) < 2) yield* Effect.sleep("5 millis")
        expect(sampleOf(yield* scrape, depth)).toBe(2)
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(waiting)
        expect(sampleOf(yield* scrape, depth)).toBe(0)
      })
    )
  })
})

describe("metrics off (the default)", () => {
  layer(TestApp.layer("memory:"), { excludeTestServices: true })((it) => {
    it.effect("/metrics is an unknown route", () =>
      Effect.gen(function* () {
        const app = yield* TestApp.TestApp
        expectProblem(yield* app.request("GET", "/metrics"), 404, "NotFoundError")
      })
    )
  })
})

describe("metrics on their own port (METRICS_PORT)", () => {
  layer(TestApp.layer("memory:", { SERVICE_METRICS_ENABLED: "true", SERVICE_METRICS_PORT: "0" }), {
    excludeTestServices: true
  })((it) => {
    it.effect("are served there, and not on the API's port", () =>
      Effect.gen(function* () {
        const app = yield* TestApp.TestApp
        const { address } = yield* MetricsListener
        expect(address._tag).toBe("Some")
        const port = address._tag === "Some" && address.value._tag === "TcpAddress" ? address.value.port : 0
        const metricsPort = TestApp.request(`http://127.0.0.1:${port}`)
        const session = yield* signUp()
        expect((yield* me(session.access)).status).toBe(200)
        const reply = yield* metricsPort("GET", "/metrics")
        expect(reply.status).toBe(200)
        expect(reply.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/)
        const samples = parseSamples(reply.text)
        const route = `${app.settings.server.authPrefix}/me`
        expect(sampleOf(samples, requests, { method: "GET", route, status: "200" })).toBeGreaterThanOrEqual(1)
        expect((yield* metricsPort("GET", "/elsewhere")).status).toBe(404)
        expectProblem(yield* app.request("GET", "/metrics"), 404, "NotFoundError")
      })
    )
  })
})
