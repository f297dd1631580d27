import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call, expectProblem, login, password, signUp, uniqueEmail } from "../support/flows.js"
import * as TestApp from "../support/TestApp.js"

const securityHeaders = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'"
}

const expectSecurityHeaders = (headers: Headers) => {
  for (const [name, value] of Object.entries(securityHeaders)) expect(headers.get(name)).toBe(value)
  expect(headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
}

/** A body streamed without Content-Length, so only the reader's byte limit can stop it. */
const chunked = (bytes: number) =>
  Effect.flatMap(TestApp.TestApp, (app) =>
    Effect.promise(async () => {
      const chunk = new TextEncoder().encode(`{"email":"${"a".repeat(bytes)}"}`)
      const body = new ReadableStream({
        start(controller) {
          controller.enqueue(chunk)
          controller.close()
        }
      })
      const response = await fetch(`${app.url}${app.settings.server.authPrefix}/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        duplex: "half"
      } as RequestInit)
      return { status: response.status, headers: response.headers, body: (await response.json()) as unknown }
    })
  )

for (const backend of TestApp.backends) {
  describe(`bad input and protocol edges (${backend.name})`, () => {
    layer(TestApp.layer(backend), { excludeTestServices: true })((it) => {
      it.effect("malformed JSON is 422 problem+json, never a 500", () =>
        Effect.gen(function* () {
          for (const raw of ['{"email": ', "{email: 'x'}", "nul", "[1,2"]) {
            const reply = yield* call("POST", "/login", { raw, headers: { "content-type": "application/json" } })
            const problem = expectProblem(reply, 422, "ValidationError")
            expect(problem.detail).toBe("The request body is not valid JSON.")
          }
        })
      )

      it.effect("wrong types and missing fields are 422 naming the field", () =>
        Effect.gen(function* () {
          const cases: ReadonlyArray<readonly [string, unknown, string]> = [
            ["/register", { email: 42, password }, "email"],
            ["/register", { email: uniqueEmail(), password: ["x"] }, "password"],
            ["/register", { password }, "email"],
            ["/login", { email: uniqueEmail() }, "password"],
            ["/refresh", { refresh_token: null }, "refresh_token"]
          ]
          for (const [path, json, field] of cases) {
            const problem = expectProblem(yield* call("POST", path, { json }), 422, "ValidationError")
            expect(problem.errors?.map((error) => error.path)).toContain(field)
          }
        })
      )

      it.effect("an empty body, a JSON array and a JSON string are 422", () =>
        Effect.gen(function* () {
          for (const raw of ["", "[]", '"text"']) {
            const reply = yield* call("POST", "/register", { raw, headers: { "content-type": "application/json" } })
            expectProblem(reply, 422, "ValidationError")
          }
        })
      )

      it.effect("a 100 KiB body is 413 problem+json, and nothing of it is processed", () =>
        Effect.gen(function* () {
          const email = uniqueEmail()
          const big = JSON.stringify({ email, password: "p".repeat(100 * 1024) })
          const reply = yield* call("POST", "/register", { raw: big, headers: { "content-type": "application/json" } })
          expectProblem(reply, 413, "PayloadTooLargeError")
          expectProblem(yield* login(email), 401, "AuthenticationError")
        })
      )

      it.effect("a body streamed without Content-Length is 411 problem+json, large or small", () =>
        Effect.gen(function* () {
          expectProblem(yield* chunked(100 * 1024), 411, "LengthRequiredError")
          expectProblem(yield* chunked(10), 411, "LengthRequiredError")
        })
      )

      it.effect("a body that is not JSON is 415", () =>
        Effect.gen(function* () {
          const reply = yield* call("POST", "/login", {
            raw: `email=${uniqueEmail()}&password=x`,
            headers: { "content-type": "application/x-www-form-urlencoded" }
          })
          expectProblem(reply, 415, "UnsupportedMediaTypeError")
        })
      )

      it.effect("a route that takes no body still refuses a non-JSON or oversized one, as its document says", () =>
        Effect.gen(function* () {
          const text = { raw: "hello", headers: { "content-type": "text/plain" } }
          expectProblem(yield* call("POST", "/logout", text), 415, "UnsupportedMediaTypeError")
          const huge = {
            raw: JSON.stringify({ pad: "x".repeat(70_000) }),
            headers: { "content-type": "application/json" }
          }
          expectProblem(yield* call("POST", "/logout", huge), 413, "PayloadTooLargeError")
        })
      )

      it.effect("a body without Content-Type is 415 and is not read: no cross-site simple request gets in", () =>
        Effect.gen(function* () {
          const email = uniqueEmail()
          for (const path of ["/register", "/login"]) {
            const reply = yield* call("POST", path, { raw: JSON.stringify({ email, password }) })
            expectProblem(reply, 415, "UnsupportedMediaTypeError")
          }
          expectProblem(yield* login(email), 401, "AuthenticationError")
        })
      )

      it.effect("JSON nested deeper than 32 levels is 422 before decoding, however deep", () =>
        Effect.gen(function* () {
          for (const depth of [33, 1_000, 20_000]) {
            const raw = `{"email":${"[".repeat(depth - 1)}1${"]".repeat(depth - 1)},"password":"x"}`
            const reply = yield* call("POST", "/register", { raw, headers: { "content-type": "application/json" } })
            const problem = expectProblem(reply, 422, "ValidationError")
            expect(problem.detail).toContain("nested deeper than 32")
          }
          const shallow = `{"email":${"[".repeat(31)}1${"]".repeat(31)},"password":"x"}`
          const reply = yield* call("POST", "/register", {
            raw: shallow,
            headers: { "content-type": "application/json" }
          })
          expect(expectProblem(reply, 422, "ValidationError").detail).not.toContain("nested")
        })
      )

      it.effect("a NUL character anywhere in a JSON body is 422, on every store", () =>
        Effect.gen(function* () {
          const bodies = [
            { email: "a\u0000b@example.com", password },
            { email: uniqueEmail(), password: `pass\u0000word-long-enough` }
          ]
          for (const json of bodies) {
            for (const path of ["/register", "/login", "/password-reset/request"]) {
              const raw = JSON.stringify(json)
              const reply = yield* call("POST", path, { raw, headers: { "content-type": "application/json" } })
              expectProblem(reply, 422, "ValidationError")
            }
          }
        })
      )

      it.effect("control characters in an email, a login identifier or a path parameter are 422", () =>
        Effect.gen(function* () {
          for (const email of ["al\tice@example.com", "alice@exa\u007fmple.com", "bob\u0001@example.com"]) {
            const problem = expectProblem(
              yield* call("POST", "/register", { json: { email, password } }),
              422,
              "ValidationError"
            )
            expect(problem.errors?.map((error) => error.path)).toContain("email")
            expectProblem(yield* call("POST", "/login", { json: { email, password } }), 422, "ValidationError")
          }
          const { access } = yield* signUp()
          for (const id of ["%00", "abc%0Adef", "x%7F"]) {
            expectProblem(yield* call("DELETE", `/sessions/${id}`, { token: access }), 422, "ValidationError")
          }
        })
      )

      it.effect("a 422 names the field and the rule, never the value sent", () =>
        Effect.gen(function* () {
          const secret = "Sup3r-Secret-Value-That-Must-Not-Echo"
          const bodies: ReadonlyArray<readonly [ReadonlyArray<string>, unknown]> = [
            [["/register", "/login"], { email: uniqueEmail(), password: secret.repeat(200) }],
            [["/register", "/login"], { email: uniqueEmail(), password: [secret] }],
            [["/register", "/login"], { email: uniqueEmail(), password: { value: secret } }],
            [["/register", "/password-reset/request"], { email: `${secret}@@example.com`, password }]
          ]
          for (const [paths, json] of bodies) {
            for (const path of paths) {
              const reply = yield* call("POST", path, { json })
              expectProblem(reply, 422, "ValidationError")
              expect(reply.text).not.toContain(secret)
            }
          }
        })
      )

      it.effect("one plain email address only, Unicode-normalised: no lists, display names or twin spellings", () =>
        Effect.gen(function* () {
          for (const email of [
            "a,b@evil.example",
            "<b@evil.example>",
            "Bob <b@evil.example>",
            '"b"@evil.example',
            "b@evil"
          ]) {
            const problem = expectProblem(
              yield* call("POST", "/register", { json: { email, password } }),
              422,
              "ValidationError"
            )
            expect(problem.errors?.map((error) => error.path)).toContain("email")
          }
          const local = uniqueEmail("jos\u00e9")
          const decomposed = local.normalize("NFD")
          expect(decomposed).not.toBe(local)
          expect((yield* call("POST", "/register", { json: { email: local, password } })).status).toBe(202)
          expect((yield* login(decomposed)).status).toBe(200)
          // ASCII letters fold; other letters are compared as they are (docs/integrating.md, "Cookie mode and CORS":
          // no Unicode case mapping), so `JOSÉ` is another address than `josé`.
          expect((yield* login(local.replace(/[a-z]/g, (letter) => letter.toUpperCase()))).status).toBe(200)
          expect((yield* login(local.toUpperCase())).status).toBe(401)
        })
      )

      it.effect("an unknown route is a 404 problem and a wrong method a 405 with Allow", () =>
        Effect.gen(function* () {
          expectProblem(yield* call("GET", "/nothing-here"), 404, "NotFoundError")
          const app = yield* TestApp.TestApp
          expectProblem(yield* app.request("GET", "/"), 404, "NotFoundError")
          const wrong = yield* call("PUT", "/me")
          expectProblem(wrong, 405, "MethodNotAllowedError")
          expect(wrong.headers.get("allow")).toBe("GET, PATCH, DELETE")
          const get = yield* call("GET", "/login")
          expectProblem(get, 405, "MethodNotAllowedError")
          expect(get.headers.get("allow")).toBe("POST")
        })
      )

      it.effect("security headers are on successes and on errors", () =>
        Effect.gen(function* () {
          const session = yield* signUp()
          const app = yield* TestApp.TestApp
          for (const reply of [
            yield* call("GET", "/me", { token: session.access }),
            yield* call("GET", "/me"),
            yield* call("GET", "/nothing-here"),
            yield* app.request("GET", "/healthz")
          ]) {
            expectSecurityHeaders(reply.headers)
          }
          expect((yield* app.request("GET", "/healthz")).headers.get("strict-transport-security")).toBeNull()
        })
      )

      it.effect("GET /healthz and GET /readyz answer at the root, outside the auth prefix", () =>
        Effect.gen(function* () {
          const app = yield* TestApp.TestApp
          const reply = yield* app.request("GET", "/healthz")
          expect(reply.status).toBe(200)
          expect(reply.body).toEqual({ status: "ok" })
          const ready = yield* app.request("GET", "/readyz")
          expect(ready.status).toBe(200)
          expect(ready.body).toEqual({ status: "ready" })
        })
      )

      it.effect("the OpenAPI document and the docs page are served under the auth prefix", () =>
        Effect.gen(function* () {
          const spec = yield* call("GET", "/openapi.json")
          expect(spec.status).toBe(200)
          const document = spec.body as {
            openapi: string
            paths: Record<string, unknown>
            components: { schemas: object }
          }
          expect(document.openapi).toBe("3.1.0")
          expect(Object.keys(document.paths)).toEqual(
            expect.arrayContaining(["/api/v1/auth/register", "/api/v1/auth/login", "/api/v1/auth/me", "/healthz"])
          )
          expect(JSON.stringify(document)).not.toContain("HttpApiDecodeError")
          // Every error response is problem+json and lists each kind once.
          for (const operations of Object.values(document.paths) as Array<Record<string, { responses: object }>>) {
            for (const operation of Object.values(operations)) {
              for (const [status, response] of Object.entries(operation.responses)) {
                if (Number(status) < 400) continue
                const content = (response as { content: Record<string, { schema: { anyOf?: Array<unknown> } }> })
                  .content
                expect(Object.keys(content)).toEqual(["application/problem+json"])
                const members = (content["application/problem+json"]?.schema.anyOf ?? []).map((m) => JSON.stringify(m))
                expect(new Set(members).size).toBe(members.length)
              }
            }
          }
          const docs = yield* call("GET", "/docs")
          expect(docs.status).toBe(200)
          expect(docs.headers.get("content-type")).toContain("text/html")
          expect(docs.headers.get("content-security-policy")).toContain("script-src 'unsafe-inline'")
          expect(docs.headers.get("x-frame-options")).toBe("DENY")
        })
      )
    })
  })
}

describe("Strict-Transport-Security", () => {
  layer(TestApp.layer("memory:", { SERVICE_PUBLIC_URL: "https://auth.example.com" }), { excludeTestServices: true })(
    (it) => {
      it.effect("is sent when PUBLIC_URL is https", () =>
        Effect.gen(function* () {
          const app = yield* TestApp.TestApp
          const reply = yield* app.request("GET", "/healthz")
          expect(reply.headers.get("strict-transport-security")).toBe("max-age=63072000; includeSubDomains")
        })
      )
    }
  )
})
