import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Option } from "effect"
import { Authorize } from "../../../../application/oidc/Authorize.js"
import { BrowserSessions } from "../../../../application/oidc/BrowserSessions.js"
import { browserBundle } from "../../demo/demo.js"
import { pageStyles } from "../../hosted/pages.js"
import { queryOf, sessionCookie } from "./browser.js"
import { unavailable } from "./forms.js"
import { providerPageScript } from "./pageScript.js"
import { providerConsentPage, providerPageStyles, providerSignInPage } from "./pages.js"
import { noStore, type ProviderPlaces, providerPaths } from "./places.js"

/** Whether a request asks for JSON rather than a page (a deployment's own consent screen does). */
const wantsJson = (request: HttpServerRequest.HttpServerRequest) => {
  const accept = request.headers.accept ?? ""
  return /application\/json/i.test(accept) && !/text\/html/i.test(accept)
}

const json = (status: number, body: unknown) => HttpServerResponse.unsafeJson(body, { status, headers: noStore })

/**
 * GET /oauth2/consent: the consent prompt of a parked request as JSON for a signed-in browser
 * (`Accept: application/json`), else the hosted consent page (with HOSTED_PAGES); and the hosted
 * sign-in page with its script and styles.
 */
export const pageRoutes = (places: ProviderPlaces) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function* () {
      const authorize = yield* Authorize
      const browser = yield* BrowserSessions
      const paths = providerPaths(places)
      const pages = places.pages
      const page = (html: string) => HttpServerResponse.text(html, { contentType: "text/html; charset=utf-8" })

      const prompt = Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const session = yield* browser.find(sessionCookie(request))
        if (Option.isNone(session)) return json(401, { error: "login_required", error_description: "sign in first" })
        return yield* authorize.consentPrompt(queryOf(request).get("request") ?? "").pipe(
          Effect.map((found) => json(200, found)),
          Effect.catchTag("ParkedRequestGone", () =>
            Effect.succeed(
              json(410, { error: "invalid_request", error_description: "the authorization request is gone" })
            )
          )
        )
      }).pipe(Effect.catchTag("StoreUnavailableError", () => Effect.succeed(unavailable)))

      const consentPage = pages === undefined ? undefined : page(providerConsentPage(pages))
      yield* router.get(
        paths.consent as `/${string}`,
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
          consentPage === undefined || wantsJson(request) ? prompt : Effect.succeed(consentPage)
        )
      )
      if (pages === undefined) return
      const signIn = page(providerSignInPage(pages))
      yield* router.get(paths.signIn as `/${string}`, Effect.succeed(signIn))
      const script = HttpServerResponse.text(providerPageScript, { contentType: "text/javascript; charset=utf-8" })
      yield* router.get(paths.pageScript as `/${string}`, Effect.succeed(script))
      if (pages.passkeys) {
        const bundle = HttpServerResponse.text(browserBundle(), { contentType: "text/javascript; charset=utf-8" })
        yield* router.get(paths.webauthnScript as `/${string}`, Effect.succeed(bundle))
      }
      const styles = HttpServerResponse.text(pageStyles + providerPageStyles, {
        contentType: "text/css; charset=utf-8"
      })
      yield* router.get(paths.pageStyles as `/${string}`, Effect.succeed(styles))
    })
  )
