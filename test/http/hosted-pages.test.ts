import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as TestApp from "../support/TestApp.js"

/** The pages the mailed links open (HOSTED_PAGES): on by default, each served with everything it needs. */

const pages = ["/verify-email", "/reset-password"]

describe("HOSTED_PAGES on (the default)", () => {
  layer(TestApp.layer("memory:", { SERVICE_PRODUCT_NAME: "Acme <Cloud>" }), { excludeTestServices: true })((it) => {
    it.effect("serves both pages, their script and styles, under a strict policy of their own", () =>
      Effect.gen(function* () {
        const app = yield* TestApp.TestApp
        for (const path of pages) {
          const page = yield* app.request("GET", `${path}?token=a.b.c`)
          expect(page.status, path).toBe(200)
          expect(page.headers.get("content-type")).toMatch(/^text\/html/)
          expect(page.headers.get("referrer-policy")).toBe("no-referrer")
          expect(page.headers.get("cache-control")).toBe("no-store")
          const policy = page.headers.get("content-security-policy") ?? ""
          expect(policy).toContain("script-src 'self'")
          expect(policy).toContain("connect-src 'self'")
          expect(policy).toContain("form-action 'none'")
          expect(policy).toContain("frame-ancestors 'none'")
          expect(policy).not.toContain("unsafe")
          expect(policy).not.toMatch(/https?:/)
          // No inline script or style: every one the page names is a file the service serves.
          expect(page.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/)
          expect(page.text).not.toMatch(/<style|style="/)
          expect(page.text).toMatch(/<html lang="en">/)
          expect(page.text).toContain("Acme &lt;Cloud&gt;")
          expect(page.text).not.toContain("a.b.c")
          // The one link out is the way back to the app, a navigation the policy does not govern.
          const assets = [...page.text.matchAll(/<(?:script|link)[^>]*(?:src|href)="([^"]+)"/g)].map(
            (match) => match[1] ?? ""
          )
          expect(assets.sort()).toEqual(["hosted/pages.css", "hosted/pages.js"])
          for (const asset of assets) {
            const reply = yield* app.request("GET", `/${asset}`)
            expect(reply.status, asset).toBe(200)
            expect(reply.headers.get("content-security-policy")).toBe(policy)
          }
          expect((yield* app.request("POST", path)).status).toBe(405)
        }
        const script = yield* app.request("GET", "/hosted/pages.js")
        expect(script.headers.get("content-type")).toMatch(/^text\/javascript/)
        expect(script.text).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/)
        expect(() => new Function(script.text)).not.toThrow()
        // What the pages say to people speaks of links: "token" is the API's word, not theirs.
        const sentences = [...script.text.matchAll(/"([A-Z][^"]*[.:])"/g)].map((match) => match[1] ?? "")
        expect(sentences.length).toBeGreaterThan(8)
        expect(sentences.filter((sentence) => /token/i.test(sentence))).toEqual([])
      })
    )

    it.effect("offers a way back: without APP_URL, to a page that says the flow is over and what to set", () =>
      Effect.gen(function* () {
        const app = yield* TestApp.TestApp
        const done = new URL("hosted/done", `${app.settings.server.publicUrl.href.replace(/\/?$/, "/")}`).href
        for (const path of pages) {
          const page = yield* app.request("GET", path)
          expect(page.text, path).toContain(`<p id="back" hidden><a href="${done}">Back to Acme &lt;Cloud&gt;</a></p>`)
        }
        const reached = yield* app.request("GET", new URL(done).pathname)
        expect(reached.status).toBe(200)
        expect(reached.headers.get("content-type")).toMatch(/^text\/html/)
        expect(reached.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
        expect(reached.text).toContain("You are done here")
        expect(reached.text).toContain("<code>SERVICE_APP_URL</code>")
        expect(reached.text).toContain("Acme &lt;Cloud&gt;")
      })
    )

    it.effect("each page names its API route relative to itself, under the auth prefix", () =>
      Effect.gen(function* () {
        const app = yield* TestApp.TestApp
        const prefix = app.settings.server.authPrefix.slice(1)
        const verify = yield* app.request("GET", "/verify-email")
        expect(verify.text).toContain(`<meta name="portcullis-endpoint" content="${prefix}/verify-email/confirm">`)
        const reset = yield* app.request("GET", "/reset-password")
        expect(reset.text).toContain(`<meta name="portcullis-endpoint" content="${prefix}/password-reset/confirm">`)
        // Every field has its label; the result is announced.
        for (const id of ["new-password", "repeat-password"]) expect(reset.text).toContain(`<label for="${id}">`)
        expect(reset.text).toContain('aria-live="polite"')
      })
    )
  })
})

describe("HOSTED_PAGES with APP_URL", () => {
  layer(TestApp.layer("memory:", { SERVICE_APP_URL: "https://app.example.com/sign-in?from=reset&a=1" }), {
    excludeTestServices: true
  })((it) => {
    it.effect("the way back leads to APP_URL, escaped", () =>
      Effect.gen(function* () {
        const app = yield* TestApp.TestApp
        const page = yield* app.request("GET", "/reset-password")
        expect(page.text).toContain(
          '<a href="https://app.example.com/sign-in?from=reset&amp;a=1">Back to Portcullis</a>'
        )
      })
    )
  })
})

describe("HOSTED_PAGES with empty prefixes", () => {
  layer(TestApp.layer("memory:", { SERVICE_API_PREFIX: "", SERVICE_AUTH_ROUTER_PREFIX: "" }), {
    excludeTestServices: true
  })((it) => {
    it.effect("the pages and the API routes beside them keep apart", () =>
      Effect.gen(function* () {
        const app = yield* TestApp.TestApp
        const verify = yield* app.request("GET", "/verify-email")
        expect(verify.status).toBe(200)
        expect(verify.text).toContain('<meta name="portcullis-endpoint" content="verify-email/confirm">')
        const confirm = yield* app.request("POST", "/verify-email/confirm", { json: { token: "nonsense" } })
        expect(confirm.status).toBe(401)
      })
    )
  })
})

describe("HOSTED_PAGES=false", () => {
  layer(TestApp.layer("memory:", { SERVICE_HOSTED_PAGES: "false" }), { excludeTestServices: true })((it) => {
    it.effect("serves no page, for a deployment with its own front end", () =>
      Effect.gen(function* () {
        const app = yield* TestApp.TestApp
        for (const path of [...pages, "/hosted/pages.js", "/hosted/pages.css"]) {
          expect((yield* app.request("GET", path)).status, path).toBe(404)
        }
      })
    )
  })
})
