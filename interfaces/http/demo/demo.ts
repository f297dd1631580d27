import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Layer } from "effect"
import { demoPage, demoStyles } from "./page.js"
import { demoScript } from "./script.js"

/** Where the demo lives, at the root whatever the auth prefix. */
export const DEMO_PATH = "/demo"

/** Every GET route of the demo, for the route table (405 on a wrong method). */
export const demoPaths = [
  DEMO_PATH,
  `${DEMO_PATH}/demo.js`,
  `${DEMO_PATH}/demo.css`,
  `${DEMO_PATH}/simplewebauthn-browser.js`
]

/**
 * The page's own Content-Security-Policy: its scripts, styles and API calls come from this
 * origin only; nothing inline, nothing from elsewhere (no CDN: it must run offline).
 */
export const demoPolicy =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/** The browser bundle of @simplewebauthn/browser, from the installed package (its exports name no bundle). */
export const browserBundle = () => {
  const entry = createRequire(import.meta.url).resolve("@simplewebauthn/browser")
  // .../@simplewebauthn/browser/script/index.js → the package's folder.
  return readFileSync(join(dirname(dirname(entry)), "dist", "bundle", "index.umd.min.js"), "utf8")
}

const javascript = (text: string) => HttpServerResponse.text(text, { contentType: "text/javascript; charset=utf-8" })

/** What the demo shows beside the passkeys. */
export interface DemoOptions {
  /** Sign-in by a mailed code (EMAIL_SIGN_IN_ENABLED): with sign-up on, passwordless sign-up too. */
  readonly emailSignIn: boolean
  /** PASSKEY_ENABLED: without it the passkey sections are hidden and the passkeys never read. */
  readonly passkeys: boolean
}

/**
 * The demo page (SERVICE_DEMO=true): register, sign in with a password or a mailed code, add a
 * passkey, sign out, sign in with the passkey, list and revoke sessions. Everything is read and
 * built once, at start-up.
 */
export const demoLayer = (authPrefix: string, options: DemoOptions = { emailSignIn: false, passkeys: true }) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function* () {
      const bundle = yield* Effect.sync(browserBundle)
      yield* router.get(DEMO_PATH, Effect.succeed(HttpServerResponse.html(demoPage(authPrefix, options))))
      yield* router.get(`${DEMO_PATH}/demo.js`, Effect.succeed(javascript(demoScript)))
      yield* router.get(`${DEMO_PATH}/simplewebauthn-browser.js`, Effect.succeed(javascript(bundle)))
      yield* router.get(
        `${DEMO_PATH}/demo.css`,
        Effect.succeed(HttpServerResponse.text(demoStyles, { contentType: "text/css; charset=utf-8" }))
      )
    })
  )

/** Nothing, when the demo is off. */
export const noDemo = Layer.empty
