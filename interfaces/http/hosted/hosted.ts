import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Layer, Option } from "effect"
import { underPublicUrl } from "../../../domain/Here.js"
import type { LinkPage } from "../../../domain/Mail.js"
import {
  confirmEmailPage,
  donePage,
  type PageOptions,
  pageStyles,
  resetPasswordPage,
  signInPage,
  undoEmailChangePage,
  verifyEmailPage
} from "./pages.js"
import { pageScript } from "./script.js"

const SCRIPT_PATH = "/hosted/pages.js"
const STYLES_PATH = "/hosted/pages.css"
/** Where "Back to …" leads without APP_URL: a page that says the flow is over, and what the operator sets. */
const DONE_PATH = "/hosted/done"

/** The pages the mailed links open (PUBLIC_URL/<purpose>?token=…), at the root whatever the auth prefix. */
const pagePaths: Readonly<Record<LinkPage, `/${LinkPage}`>> = {
  "verify-email": "/verify-email",
  "reset-password": "/reset-password",
  "confirm-email": "/confirm-email",
  "undo-email-change": "/undo-email-change",
  "sign-in": "/sign-in"
}

/** Every GET route of the hosted pages, for the route table (405 on a wrong method) and their policy. */
export const hostedPaths: ReadonlyArray<string> = [...Object.values(pagePaths), SCRIPT_PATH, STYLES_PATH, DONE_PATH]

/**
 * The pages' own Content-Security-Policy: script, styles and API calls from this origin only,
 * nothing inline, no markup built from strings (Trusted Types), no form posted anywhere.
 */
export const hostedPolicy =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'"

export interface HostedOptions {
  readonly authPrefix: string
  readonly product: string
  readonly passwordMinLength: number
  /** Serve /sign-in, whose link only EMAIL_SIGN_IN_ENABLED mails. */
  readonly emailSignIn: boolean
  /** Where the pages send people back once done: APP_URL, else the service's /hosted/done. */
  readonly returnUrl: string
  /**
   * Bearer mode (TOKEN_TRANSPORT=bearer): /sign-in hands its link on to the app at `handOff`
   * (APP_URL), unset when there is none, instead of signing in a browser that would keep nothing.
   */
  readonly bearerSignIn?: { readonly handOff: string | undefined }
}

/**
 * Where "Back to …" leads: APP_URL when set, else the service's own page saying the flow is over
 * (under PUBLIC_URL, as the pages are): the root of the service's address answers no page.
 */
export const returnUrl = (server: { readonly appUrl: Option.Option<URL>; readonly publicUrl: URL }) =>
  Option.match(server.appUrl, {
    onNone: () => underPublicUrl(server.publicUrl, DONE_PATH).href,
    onSome: (url) => url.href
  })

/** The API route as the page reaches it: relative to the page, which sits at the root. */
const relative = (authPrefix: string, route: string) => `${authPrefix}${route}`.slice(1)

/**
 * The hosted pages (HOSTED_PAGES, on by default): /verify-email, /reset-password, /confirm-email,
 * /undo-email-change and /sign-in complete the mailed flows through the service's own API. Built once, at start-up.
 */
export const hostedLayer = (options: HostedOptions) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function* () {
      const page = (endpoint: string): PageOptions => ({
        product: options.product,
        endpoint: relative(options.authPrefix, endpoint),
        passwordMinLength: options.passwordMinLength,
        returnUrl: options.returnUrl
      })
      const html = (text: string) => Effect.succeed(HttpServerResponse.html(text))
      yield* router.get(pagePaths["verify-email"], html(verifyEmailPage(page("/verify-email/confirm"))))
      yield* router.get(pagePaths["reset-password"], html(resetPasswordPage(page("/password-reset/confirm"))))
      yield* router.get(pagePaths["confirm-email"], html(confirmEmailPage(page("/me/email/confirm"))))
      yield* router.get(pagePaths["undo-email-change"], html(undoEmailChangePage(page("/me/email/undo"))))
      if (options.emailSignIn) {
        yield* router.get(pagePaths["sign-in"], html(signInPage(page("/email-sign-in/confirm"), options.bearerSignIn)))
      }
      yield* router.get(DONE_PATH, html(donePage(options.product)))
      yield* router.get(
        SCRIPT_PATH,
        Effect.succeed(HttpServerResponse.text(pageScript, { contentType: "text/javascript; charset=utf-8" }))
      )
      yield* router.get(
        STYLES_PATH,
        Effect.succeed(HttpServerResponse.text(pageStyles, { contentType: "text/css; charset=utf-8" }))
      )
    })
  )

/** Nothing, for a deployment with its own front end (HOSTED_PAGES=false). */
export const noHostedPages = Layer.empty
