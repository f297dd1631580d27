import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call } from "../support/flows.js"
import * as TestApp from "../support/TestApp.js"

/**
 * The OpenAPI document tells the cookie-mode Origin rule (docs/integrating.md, "Cookie mode and CORS"): every unsafe
 * route may answer 403 CsrfError; in bearer mode no route but those that always may.
 */

// biome-ignore lint/suspicious/noExplicitAny: a JSON document read loosely, its shape checked by the assertions
type Json = Record<string, any>

const forbiddenCodes = (document: Json, method: string, path: string): ReadonlyArray<string> => {
  const schema = document.paths[`/api/v1/auth${path}`]?.[method]?.responses?.["403"]?.content?.[
    "application/problem+json"
  ]?.schema as Json | undefined
  const refs = (schema?.anyOf ?? (schema === undefined ? [] : [schema])) as ReadonlyArray<Json>
  return refs.map((ref) => String(ref.$ref).replace("#/components/schemas/", ""))
}

const unsafe = [
  ["post", "/login"],
  ["post", "/register"],
  ["patch", "/me"],
  ["delete", "/sessions/{family_id}"],
  ["post", "/admin/assign-role"]
] as const

const document = Effect.map(call("GET", "/openapi.json"), (reply) => reply.body as Json)

describe("the OpenAPI document in cookie mode", () => {
  layer(TestApp.layer("memory:", { SERVICE_TOKEN_TRANSPORT: "cookie" }), { excludeTestServices: true })((it) => {
    it.effect("declares 403 CsrfError on every unsafe route, beside the route's own 403s", () =>
      Effect.gen(function* () {
        const spec = yield* document
        for (const [method, path] of unsafe) expect(forbiddenCodes(spec, method, path), path).toContain("CsrfError")
        expect(forbiddenCodes(spec, "post", "/admin/assign-role")).toContain("AuthorizationError")
        expect(forbiddenCodes(spec, "get", "/me")).not.toContain("CsrfError")
      })
    )
  })
})

describe("the OpenAPI document in bearer mode", () => {
  layer(TestApp.layer("memory:"), { excludeTestServices: true })((it) => {
    it.effect("declares no Origin refusal, and names the step-up challenge among the 401 headers", () =>
      Effect.gen(function* () {
        const spec = yield* document
        expect(forbiddenCodes(spec, "post", "/login")).not.toContain("CsrfError")
        const challenge = spec.paths["/api/v1/auth/me"].get.responses["401"].headers["WWW-Authenticate"]
        expect(challenge.description).toContain("insufficient_user_authentication")
      })
    )
  })
})
