import { readFileSync } from "node:fs"
import { gunzipSync } from "node:zlib"
import * as HttpApi from "@effect/platform/HttpApi"
import { describe, expect, layer } from "@effect/vitest"
import { Validator } from "@seriousme/openapi-schema-validator"
import { Effect, Option, Schema } from "effect"
import { features } from "../../composition/features.js"
import { openApiDocument } from "../../composition/service.js"
import type { Settings } from "../../config/Settings.js"
import { protocolLimits } from "../../interfaces/http/features/oidc/places.js"
import { problemCodes } from "../../interfaces/http/problems.js"
import { servedApi, servedFeatures } from "../../interfaces/http/server.js"
import { everyGroupEnv } from "../support/everyGroup.js"
import { call } from "../support/flows.js"
import * as Raw from "../support/rawHttp.js"
import * as TestApp from "../support/TestApp.js"

// biome-ignore lint/suspicious/noExplicitAny: a JSON document read loosely, its shape checked by the assertions
type Json = Record<string, any>

const packageJson = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string
}

const env = everyGroupEnv()

const prefix = "/api/v1/auth"

/** The operations whose handlers touch no store (the keys are in the settings): they never answer 503. */
const storeless = new Set(["get /healthz", `get ${prefix}/.well-known/jwks.json`])

/**
 * The operations a rate-limit bucket counts, as the features declare them; change-password
 * counts per signed-in user in its use case, passkey registration in a middleware of its routes.
 */
const limitedOperations = new Set([
  ...features
    .flatMap((feature) => feature.limits)
    // The provider's protocol routes are served beside the API: discovery describes them.
    .filter((route) => !protocolLimits.includes(route))
    .map((route) => `${route.method.toLowerCase()} ${prefix}${route.path.replace(/:(\w+)/g, "{$1}")}`),
  `post ${prefix}/change-password`,
  `post ${prefix}/passkeys/register/begin`,
  `post ${prefix}/passkeys/register/complete`
])

/** The problem codes a response declares, from its schema's references. */
const codesOf = (response: Json | undefined): ReadonlyArray<string> => {
  const schema = response?.content?.["application/problem+json"]?.schema as Json | undefined
  const refs = (schema?.anyOf ?? [schema]) as ReadonlyArray<Json | undefined>
  return refs.map((ref) => String(ref?.$ref ?? "").replace("#/components/schemas/", ""))
}

const expectRateLimited = (responses: Record<string, Json>, where: string) => {
  expect(codesOf(responses["429"]), where).toEqual(["RateLimitedError"])
  expect(Object.keys(responses["429"]?.headers ?? {}).sort(), where).toEqual([
    "RateLimit-Limit",
    "RateLimit-Remaining",
    "RateLimit-Reset",
    "Retry-After"
  ])
}

const operationsOf = (document: Json) =>
  Object.entries(document.paths as Record<string, Record<string, Json>>).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]) => ({ path, method, operation }))
  )

/** The schema each route answers with, by method, path (as the document writes it) and status. */
const successSchemas = (settings: Settings) => {
  const parts = servedFeatures(features, settings, {}).map((feature) => feature.api({ settings, deployment: {} }))
  const found = new Map<string, Schema.Schema<unknown, unknown>>()
  HttpApi.reflect(servedApi({ parts, limits: [] }, settings), {
    onGroup: () => {},
    onEndpoint: ({ endpoint, successes }) => {
      const path = endpoint.path.replace(/:(\w+)/g, "{$1}")
      for (const [status, { ast }] of successes) {
        if (Option.isSome(ast)) found.set(`${endpoint.method.toLowerCase()} ${path} ${status}`, Schema.make(ast.value))
      }
    }
  })
  return found
}

describe("the OpenAPI document, every group served", () => {
  layer(TestApp.layer("memory:", env), { excludeTestServices: true })((it) => {
    const fetchDocument = Effect.map(call("GET", "/openapi.json"), (reply) => reply.body as Json)

    it.effect("is a valid OpenAPI 3.1 document, of this version, at PUBLIC_URL", () =>
      Effect.gen(function* () {
        const document = yield* fetchDocument
        const result = yield* Effect.promise(() => new Validator().validate(document))
        expect(result.errors).toBeUndefined()
        expect(result.valid).toBe(true)
        expect(document.info.version).toBe(packageJson.version)
        expect(document.servers).toEqual([{ url: "https://auth.example.com" }])
        expect(JSON.stringify(document)).not.toContain('"$id"')
      })
    )

    it.effect("declares every problem code the service sends, each a component named after it", () =>
      Effect.gen(function* () {
        const document = yield* fetchDocument
        const schemas = document.components.schemas as Record<string, Json>
        for (const code of problemCodes) {
          expect(schemas[code]?.properties?.code?.enum, code).toEqual([code])
        }
        const referenced = new Set(
          [...JSON.stringify(document.paths).matchAll(/#\/components\/schemas\/(\w+)/g)].map((match) => match[1])
        )
        for (const code of problemCodes) {
          if (code === "NotFoundError" || code === "MethodNotAllowedError") continue
          expect(referenced.has(code), code).toBe(true)
        }
      })
    )

    it.effect("gives every operation a summary and an example, and documents the refusals of its route", () =>
      Effect.gen(function* () {
        const document = yield* fetchDocument
        for (const { path, method, operation } of operationsOf(document)) {
          const where = `${method} ${path}`
          expect(operation.summary, where).toEqual(expect.any(String))
          const responses = operation.responses as Record<string, Json>
          const examples = Object.values(responses).flatMap((response) =>
            Object.values((response.content ?? {}) as Record<string, Json>).filter((media) => media.example)
          )
          expect(examples.length, where).toBeGreaterThan(0)
          expect(responses["500"], where).toBeDefined()
          for (const status of ["411", "413", "415"]) expect(responses[status], `${where} ${status}`).toBeDefined()
        }
        const login = document.paths["/api/v1/auth/login"].post
        expect(login.responses["429"].content["application/problem+json"].example).toMatchObject({
          code: "RateLimitedError",
          status: 429
        })
      })
    )

    it.effect("declares 503 on every route that touches a store, and 429 on every limited route and no other", () =>
      Effect.gen(function* () {
        const document = yield* fetchDocument
        const seen = new Set<string>()
        for (const { path, method, operation } of operationsOf(document)) {
          const where = `${method} ${path}`
          seen.add(where)
          const responses = operation.responses as Record<string, Json>
          if (storeless.has(where)) {
            expect(responses["503"], where).toBeUndefined()
          } else {
            expect(codesOf(responses["503"]), where).toEqual(["ServiceUnavailableError"])
            expect(responses["503"]?.headers?.["Retry-After"], where).toBeDefined()
          }
          if (limitedOperations.has(where)) expectRateLimited(responses, where)
          else expect(responses["429"], where).toBeUndefined()
        }
        // Every group's limited routes are served here (verify, oauth and passkey ones included).
        for (const where of [...limitedOperations, ...storeless]) expect(seen.has(where), where).toBe(true)
      })
    )

    it.scoped(
      "declares 422 on every route, as every route refuses a body nested too deep, one taking no input too",
      () =>
        Effect.gen(function* () {
          const document = yield* fetchDocument
          const app = yield* TestApp.TestApp
          const http = yield* Effect.acquireRelease(
            Effect.sync(() => Raw.client(app.url, 1)),
            (client) => Effect.sync(client.close)
          )
          const deep = `${"[".repeat(40)}${"]".repeat(40)}`
          for (const { path, method, operation } of operationsOf(document)) {
            const where = `${method} ${path}`
            expect(codesOf(operation.responses["422"]), where).toContain("ValidationError")
            const outcome = yield* Effect.promise(() =>
              http.send({
                method: method.toUpperCase(),
                target: path.replace(/\{\w+\}/g, "x"),
                headers: [
                  ["content-type", "application/json"],
                  ["content-length", String(deep.length)]
                ],
                body: new TextEncoder().encode(deep)
              })
            )
            expect("answer" in outcome && outcome.answer.status, where).toBe(422)
          }
        })
    )

    it.effect("gives every success body an example, which decodes with the schema its route answers with", () =>
      Effect.gen(function* () {
        const document = yield* fetchDocument
        const schemas = successSchemas((yield* TestApp.TestApp).settings)
        const components = document.components.schemas as Record<string, Json>
        const resolved = (schema: Json): Json =>
          typeof schema.$ref === "string" ? (components[schema.$ref.split("/").pop() ?? ""] ?? {}) : schema
        let checked = 0
        for (const { path, method, operation } of operationsOf(document)) {
          for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
            if (Number(status) >= 300) continue
            for (const media of Object.values((response.content ?? {}) as Record<string, Json>)) {
              const where = `${method} ${path} ${status}`
              const examples = resolved(media.schema).examples as ReadonlyArray<unknown> | undefined
              expect(examples?.length ?? 0, where).toBeGreaterThan(0)
              const schema = schemas.get(where)
              expect(schema, where).toBeDefined()
              for (const example of examples ?? []) {
                expect(() => Schema.decodeUnknownSync(schema ?? Schema.Unknown)(example), where).not.toThrow()
                checked++
              }
            }
          }
        }
        expect(checked).toBeGreaterThanOrEqual(30)
        expect(document.paths["/api/v1/auth/.well-known/jwks.json"]).toBeDefined()
        // Shortened, never a whole token: examples must not teach anyone a working credential.
        const login = resolved(
          document.paths["/api/v1/auth/login"].post.responses["200"].content["application/json"].schema
        )
        expect(login.examples[0].access_token).toMatch(/^eyJ[\w.-]*…$/)
      })
    )

    it.effect("the document and the docs page are cacheable (ETag, max-age) and compressed when asked", () =>
      Effect.gen(function* () {
        for (const path of ["/openapi.json", "/docs"]) {
          const plain = yield* call("GET", path)
          expect(plain.status).toBe(200)
          expect(plain.headers.get("cache-control")).toBe("public, max-age=300")
          const etag = plain.headers.get("etag") ?? ""
          expect(etag).toMatch(/^".+"$/)
          expect(plain.headers.get("content-security-policy")).toEqual(expect.any(String))

          const again = yield* call("GET", path, { headers: { "if-none-match": etag } })
          expect(again.status).toBe(304)

          const gzipped = yield* compressed(path, "gzip")
          expect(gzipped.encoding).toBe("gzip")
          expect(gzipSize(gzipped.bytes)).toBe(plain.text.length)
          const brotli = yield* compressed(path, "br, gzip;q=0.5")
          expect(brotli.encoding).toBe("br")
          expect(brotli.bytes.length).toBeLessThan(plain.text.length)
        }
        const api = yield* call("GET", "/me")
        expect(api.headers.get("cache-control")).toBe("no-store")
      })
    )
  })
})

describe("the OpenAPI document, with GLOBAL_RATE_LIMIT", () => {
  layer(TestApp.layer("memory:", { ...env, SERVICE_GLOBAL_RATE_LIMIT: "1000/minute" }), { excludeTestServices: true })(
    (it) => {
      it.effect("declares 429 with its headers on every route but the health probes, served and printed alike", () =>
        Effect.gen(function* () {
          const document = (yield* call("GET", "/openapi.json")).body as Json
          expect(document).toEqual(openApiDocument((yield* TestApp.TestApp).settings))
          for (const { path, method, operation } of operationsOf(document)) {
            const responses = operation.responses as Record<string, Json>
            if (path === "/healthz" || path === "/readyz") expect(responses["429"], path).toBeUndefined()
            else expectRateLimited(responses, `${method} ${path}`)
          }
          const result = yield* Effect.promise(() => new Validator().validate(document))
          expect(result.errors).toBeUndefined()
        })
      )
    }
  )
})

/** The raw bytes of a document as sent with the encoding asked for (fetch would decode them). */
const compressed = (path: string, acceptEncoding: string) =>
  Effect.flatMap(TestApp.TestApp, (app) =>
    Effect.promise(async () => {
      const { request } = await import("node:http")
      return new Promise<{ encoding: string | undefined; bytes: Buffer }>((resolve, reject) => {
        const url = new URL(`${app.settings.server.authPrefix}${path}`, app.url)
        request(url, { headers: { "accept-encoding": acceptEncoding } }, (response) => {
          const chunks: Array<Buffer> = []
          response.on("data", (chunk: Buffer) => chunks.push(chunk))
          response.on("end", () =>
            resolve({ encoding: response.headers["content-encoding"], bytes: Buffer.concat(chunks) })
          )
        })
          .on("error", reject)
          .end()
      })
    })
  )

const gzipSize = (bytes: Buffer) => gunzipSync(bytes).toString("utf8").length
