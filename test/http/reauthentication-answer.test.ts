import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { ReauthenticationRequiredError } from "../../domain/errors.js"
import { declared } from "../../interfaces/http/problemSchemas.js"
import { problemOf } from "../../interfaces/http/problems.js"
import { call } from "../support/flows.js"
import { passkeyEnv } from "../support/passkeys.js"
import * as TestApp from "../support/TestApp.js"

/**
 * The answer to adding a way in on an old sign-in (docs/behaviour.md, "Ways in"), as clients see it: the
 * problem, the RFC 9470 challenge, the OpenAPI document and the typed client's decoding.
 */

// biome-ignore lint/suspicious/noExplicitAny: a JSON document read loosely, its shape checked by the assertions
type Json = Record<string, any>

const env = {
  ...passkeyEnv,
  SERVICE_OAUTH_GITHUB_CLIENT_ID: "id",
  SERVICE_OAUTH_GITHUB_CLIENT_SECRET: "secret",
  SERVICE_OAUTH_GITHUB_REDIRECT_URIS: "https://app.example.com/callback"
}

/** The routes that add a way in; each may answer ReauthenticationRequiredError with 401. */
const addingWaysIn = [
  ["post", "/api/v1/auth/passkeys/register/begin"],
  ["post", "/api/v1/auth/passkeys/register/complete"],
  ["get", "/api/v1/auth/oauth/{provider}/link/authorize"],
  ["post", "/api/v1/auth/oauth/{provider}/link/callback"],
  ["post", "/api/v1/auth/change-password"]
] as const

const codesOf = (response: Json | undefined): ReadonlyArray<string> => {
  const schema = response?.content?.["application/problem+json"]?.schema as Json | undefined
  const refs = (schema?.anyOf ?? [schema]) as ReadonlyArray<Json | undefined>
  return refs.map((ref) => String(ref?.$ref ?? "").replace("#/components/schemas/", ""))
}

describe("ReauthenticationRequiredError", () => {
  it("is a 401 problem with max_age and the RFC 9470 step-up challenge", () => {
    const rendered = problemOf(new ReauthenticationRequiredError({ maxAgeSeconds: 600 }))
    expect(rendered.status).toBe(401)
    expect(rendered.body).toMatchObject({ code: "ReauthenticationRequiredError", status: 401, max_age: 600 })
    expect(rendered.headers["www-authenticate"]).toBe(
      'Bearer error="insufficient_user_authentication", error_description="A more recent sign-in is required", max_age=600'
    )
  })

  it.effect("comes back to the typed client as the error, its max age read from the problem", () =>
    Effect.gen(function* () {
      const body = problemOf(new ReauthenticationRequiredError({ maxAgeSeconds: 42 })).body
      const decoded = yield* Schema.decodeUnknown(declared(ReauthenticationRequiredError))(body)
      expect(decoded).toBeInstanceOf(ReauthenticationRequiredError)
      expect(decoded.maxAgeSeconds).toBe(42)
    })
  )

  layer(TestApp.layer("memory:", env), { excludeTestServices: true })((it) => {
    it.effect("is declared under 401 on every route that adds a way in, in the OpenAPI document", () =>
      Effect.gen(function* () {
        const document = (yield* call("GET", "/openapi.json")).body as Json
        expect(document.components.schemas.ReauthenticationRequiredError.properties.max_age.type).toBe("integer")
        for (const [method, path] of addingWaysIn) {
          const responses = document.paths[path]?.[method]?.responses as Record<string, Json> | undefined
          expect(codesOf(responses?.["401"]), `${method} ${path}`).toContain("ReauthenticationRequiredError")
        }
      })
    )
  })
})
