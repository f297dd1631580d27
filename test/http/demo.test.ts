import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { passkeyEnv } from "../support/passkeys.js"
import * as TestApp from "../support/TestApp.js"

/** The demo page (SERVICE_DEMO): off by default; when on, served with everything it needs from the service itself. */

describe("SERVICE_DEMO=true", () => {
  layer(TestApp.layer("memory:", { ...passkeyEnv, SERVICE_DEMO: "true" }), { excludeTestServices: true })((it) => {
    it.effect("serves the page, its script, its styles and the WebAuthn browser bundle, under a strict policy", () =>
      Effect.gen(function* () {
        const app = yield* TestApp.TestApp
        const page = yield* app.request("GET", "/demo")
        expect(page.status).toBe(200)
        expect(page.headers.get("content-type")).toMatch(/^text\/html/)
        expect(page.text).toContain(`<meta name="portcullis-auth-prefix" content="${app.settings.server.authPrefix}">`)
        const policy = page.headers.get("content-security-policy") ?? ""
        expect(policy).toContain("script-src 'self'")
        expect(policy).not.toContain("unsafe-inline")
        expect(policy).not.toMatch(/https?:/)
        // Every script and stylesheet the page names is served here: nothing from elsewhere.
        const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] ?? "")
        expect(assets.sort()).toEqual(["/demo/demo.css", "/demo/demo.js", "/demo/simplewebauthn-browser.js"])
        for (const asset of assets) {
          const reply = yield* app.request("GET", asset)
          expect(reply.status, asset).toBe(200)
          expect(reply.headers.get("content-security-policy")).toBe(policy)
        }
        const bundle = yield* app.request("GET", "/demo/simplewebauthn-browser.js")
        expect(bundle.headers.get("content-type")).toMatch(/^text\/javascript/)
        expect(bundle.text).toContain("SimpleWebAuthnBrowser")
        expect((yield* app.request("POST", "/demo")).status).toBe(405)
        // The page's script parses: its text goes through a template literal, whose escapes a
        // formatter may change, and a broken script would leave every form to post natively.
        const script = yield* app.request("GET", "/demo/demo.js")
        expect(() => new Function(script.text)).not.toThrow()
        // The API keeps its own policy.
        expect((yield* app.request("GET", "/healthz")).headers.get("content-security-policy")).toBe(
          "default-src 'none'; frame-ancestors 'none'"
        )
      })
    )
  })
})

describe("SERVICE_DEMO off (the default)", () => {
  layer(TestApp.layer("memory:", passkeyEnv), { excludeTestServices: true })((it) => {
    it.effect("serves no demo", () =>
      Effect.gen(function* () {
        const app = yield* TestApp.TestApp
        for (const path of ["/demo", "/demo/demo.js", "/demo/simplewebauthn-browser.js"]) {
          expect((yield* app.request("GET", path)).status).toBe(404)
        }
      })
    )
  })
})
