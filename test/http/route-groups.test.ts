import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call, expectProblem, uniqueEmail } from "../support/flows.js"
import * as TestApp from "../support/TestApp.js"

/** The verify group is left out; its routes would otherwise be limited to 3 a minute per client. */
const deployment = { routeGroups: ["auth", "profile", "sessions", "admin"] }

describe("a route group left out of the deployment's routeGroups", () => {
  layer(TestApp.layer("memory:", { SERVICE_AUTH_RATE_LIMIT_ENABLED: "true" }, { deployment }), {
    excludeTestServices: true
  })((it) => {
    it.effect("has no routes: 404 problem, and nothing of it in the OpenAPI document", () =>
      Effect.gen(function* () {
        const app = yield* TestApp.TestApp
        for (const path of ["/verify-email/confirm", "/password-reset/request"]) {
          expectProblem(yield* call("POST", path, { json: { token: "t" } }), 404, "NotFoundError")
        }
        const document = yield* app.request("GET", `${app.settings.server.authPrefix}/openapi.json`)
        const paths = Object.keys((document.body as { paths: Record<string, unknown> }).paths)
        expect(paths).toContain(`${app.settings.server.authPrefix}/login`)
        expect(paths.filter((path) => /verify-email|password-reset/.test(path))).toEqual([])
      })
    )

    it.effect("has no limits: its limited routes are never counted, while a kept group's are", () =>
      Effect.gen(function* () {
        for (let i = 0; i < 6; i++) {
          const reply = yield* call("POST", "/password-reset/request", { json: { email: uniqueEmail() } })
          expectProblem(reply, 404, "NotFoundError")
          expect(reply.headers.get("ratelimit-limit")).toBeNull()
        }
        const kept = yield* call("POST", "/login", { json: { email: uniqueEmail(), password: "wrong password" } })
        expect(kept.headers.get("ratelimit-limit")).toBe("5")
      })
    )
  })
})
