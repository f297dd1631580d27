import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Duration, Effect, Option } from "effect"
import { Authorize, type AuthorizeOutcome, withParameters } from "../../../../application/oidc/Authorize.js"
import { BrowserSessions } from "../../../../application/oidc/BrowserSessions.js"
import { ClientRegistration } from "../../../../application/oidc/ClientRegistration.js"
import { GrantTokens } from "../../../../application/oidc/GrantTokens.js"
import { Token } from "../../../../application/oidc/Token.js"
import type { TokenEndpointError } from "../../../../application/oidc/TokenAnswers.js"
import { CsrfTokens } from "../../../../application/ports/CsrfTokens.js"
import { OidcClients } from "../../../../application/ports/OidcClients.js"
import { ProviderTokens } from "../../../../application/ports/ProviderTokens.js"
import { RateLimiter } from "../../../../application/ports/RateLimiter.js"
import type { StoreUnavailableError } from "../../../../application/ports/StoreUnavailableError.js"
import type { PresentedClient } from "../../../../domain/oidc/Client.js"
import { escapeHtml } from "../../../../domain/Text.js"
import { addressBucket } from "../../clientAddress.js"
import { oauthError } from "../../oauthAnswers.js"
import { firstValues, plainPage, queryOf, sessionCookie, withoutSessionCookies } from "./browser.js"
import {
  bearerChallenge,
  bearerOf,
  formOf,
  formParamsOf,
  notAForm,
  presentedClient,
  tokenError,
  unavailable
} from "./forms.js"
import { discoveryDocument, locationOf, noStore, type ProviderPlaces, providerPaths } from "./places.js"

/**
 * The provider's protocol routes, served beside the API: they take forms and query strings and
 * answer in OAuth's own shapes, each with `Cache-Control: no-store`.
 */
export const protocolRoutes = (places: ProviderPlaces) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function* () {
      const authorize = yield* Authorize
      const registration = yield* ClientRegistration
      const limiter = yield* RateLimiter
      /**
       * A metadata document's fetch counts in the requester's oidc_register bucket, as a
       * registration does (the pipeline counts those under the same key); a limiter that fails
       * lets the fetch through, as the pipeline's does.
       */
      const fetchCounted = (request: HttpServerRequest.HttpServerRequest) => {
        const limit = places.registerLimit
        if (limit === undefined) return Effect.succeed(true)
        return limiter
          .hit(`oidc_register:${addressBucket(Option.getOrElse(request.remoteAddress, () => "unknown"))}`, {
            limit: limit.count,
            window: Duration.seconds(limit.windowSeconds)
          })
          .pipe(
            Effect.map((decision) => decision.allowed),
            Effect.catchAll(() => Effect.succeed(true))
          )
      }
      const token = yield* Token
      const grantTokens = yield* GrantTokens
      const browser = yield* BrowserSessions
      const providerTokens = yield* ProviderTokens
      const clients = yield* OidcClients
      const csrf = yield* CsrfTokens
      const paths = providerPaths(places)

      const discovery = HttpServerResponse.unsafeJson(discoveryDocument(places), {
        headers: { "cache-control": "public, max-age=3600" }
      })
      yield* router.get(paths.openidConfiguration as `/${string}`, Effect.succeed(discovery))
      yield* router.get(paths.authorizationServer as `/${string}`, Effect.succeed(discovery))

      const answer = (outcome: AuthorizeOutcome) => {
        const location = locationOf(places, outcome)
        if (location !== undefined) return HttpServerResponse.redirect(location, { status: 303, headers: noStore })
        const why = outcome._tag === "ErrorPage" ? (outcome.error_description ?? outcome.error) : ""
        return plainPage(
          400,
          places.product,
          "This sign-in cannot go on",
          `<p>${escapeHtml(why)}</p><p>Go back to the app and try again.</p>`
        )
      }

      const storeDown = plainPage(503, places.product, "Try again in a moment", "<p>The service is busy.</p>")

      yield* router.get(
        paths.authorize as `/${string}`,
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const session = yield* browser.find(sessionCookie(request))
          const query = queryOf(request)
          // `resource` may come more than once (RFC 8707 §2); every other parameter counts once.
          const outcome = yield* authorize.authorize(
            firstValues(query),
            Option.getOrUndefined(session),
            query.getAll("resource"),
            fetchCounted(request)
          )
          return answer(outcome)
        }).pipe(Effect.catchTag("StoreUnavailableError", () => Effect.succeed(storeDown)))
      )
      // A POST is answered with the same request as a GET, so that the browser's session cookie
      // (SameSite=Lax) is sent with it.
      yield* router.post(
        paths.authorize as `/${string}`,
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const form = yield* formParamsOf(request)
          if (form === undefined) return notAForm
          return HttpServerResponse.redirect(`${places.base}${paths.authorize}?${form.toString()}`, { status: 303 })
        })
      )

      const userinfo = (form: Readonly<Record<string, string | undefined>>) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          return yield* grantTokens.userinfo(bearerOf(request, form)).pipe(
            Effect.map((claims) => HttpServerResponse.unsafeJson(claims, { headers: noStore })),
            Effect.catchTag("BearerTokenError", (error) =>
              Effect.succeed(
                HttpServerResponse.unsafeJson(
                  { error: error.error, error_description: error.error_description },
                  {
                    status: error.error === "insufficient_scope" ? 403 : 401,
                    headers: { ...noStore, "www-authenticate": bearerChallenge(error.error, error.error_description) }
                  }
                )
              )
            )
          )
        }).pipe(Effect.catchTag("StoreUnavailableError", () => Effect.succeed(unavailable)))
      yield* router.get(paths.userinfo as `/${string}`, userinfo({}))
      yield* router.post(
        paths.userinfo as `/${string}`,
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
          Effect.flatMap(formOf(request), (form) => userinfo(form ?? {}))
        )
      )

      /**
       * A route of a client authenticating itself in a form (token, revoke, introspect): the form
       * read, the client's credentials taken from the Basic header and the form, its refusals in
       * RFC 6749 §5.2's shape.
       */
      const clientRoute = <A>(
        run: (
          form: Readonly<Record<string, string | undefined>>,
          presented: PresentedClient,
          resources: ReadonlyArray<string>
        ) => Effect.Effect<A, TokenEndpointError | StoreUnavailableError>,
        respond: (value: A) => HttpServerResponse.HttpServerResponse
      ) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const params = yield* formParamsOf(request)
          if (params === undefined) return notAForm
          const form = firstValues(params)
          const presented = presentedClient(request, form)
          if (presented === undefined) return oauthError(401, "invalid_client", "the Authorization header is malformed")
          return yield* run(form, presented, params.getAll("resource")).pipe(
            Effect.map(respond),
            Effect.catchTag("TokenEndpointError", (error) =>
              Effect.succeed(tokenError(error, presented.basic !== undefined))
            )
          )
        }).pipe(Effect.catchTag("StoreUnavailableError", () => Effect.succeed(unavailable)))

      if (places.dynamicRegistration === true) {
        yield* router.post(
          paths.register as `/${string}`,
          Effect.gen(function* () {
            const request = yield* HttpServerRequest.HttpServerRequest
            if (!/^application\/json\s*(;|$)/i.test(request.headers["content-type"]?.trim() ?? ""))
              return oauthError(400, "invalid_client_metadata", "send the client's metadata as application/json")
            const text = yield* Effect.orDie(request.text)
            let metadata: unknown
            try {
              metadata = JSON.parse(text)
            } catch {
              return oauthError(400, "invalid_client_metadata", "the body is not JSON")
            }
            return yield* registration.register(metadata).pipe(
              Effect.map((registered) => HttpServerResponse.unsafeJson(registered, { status: 201, headers: noStore })),
              Effect.catchTag("RegistrationRefusal", (refusal) =>
                Effect.succeed(oauthError(400, refusal.error, refusal.error_description))
              )
            )
          }).pipe(Effect.catchTag("StoreUnavailableError", () => Effect.succeed(unavailable)))
        )
      }

      yield* router.post(
        paths.token as `/${string}`,
        clientRoute(token.exchange, (answered) => HttpServerResponse.unsafeJson(answered, { headers: noStore }))
      )
      yield* router.post(
        paths.revoke as `/${string}`,
        clientRoute(grantTokens.revoke, () => HttpServerResponse.empty({ status: 200, headers: noStore }))
      )
      yield* router.post(
        paths.introspect as `/${string}`,
        clientRoute(grantTokens.introspect, (answered) => HttpServerResponse.unsafeJson(answered, { headers: noStore }))
      )

      const invalidSignOut = "The sign-out request is not valid."
      const signOutRefused = (why: string, status = 400) =>
        plainPage(status, places.product, "This sign-out cannot go on", `<p>${escapeHtml(why)}</p>`)

      /**
       * RP-Initiated Logout: a hint (even expired) for the browser's own user signs out at once;
       * without one, or for another user, the user is asked first. The browser goes back only to
       * a post-logout URI registered for the hint's client.
       */
      const endSession = (params: Readonly<Record<string, string | undefined>>, confirmed: boolean) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const cookie = sessionCookie(request)
          const session = yield* browser.find(cookie)
          const hint =
            params.id_token_hint === undefined
              ? undefined
              : Option.getOrUndefined(yield* Effect.option(providerTokens.verifyIdTokenHint(params.id_token_hint)))
          if (params.id_token_hint !== undefined && hint === undefined) return signOutRefused(invalidSignOut)
          const clientId = params.client_id ?? hint?.aud[0]
          if (hint !== undefined && params.client_id !== undefined && !hint.aud.includes(params.client_id))
            return signOutRefused(invalidSignOut)
          const client = clientId === undefined ? Option.none() : yield* clients.find(clientId)
          const back = params.post_logout_redirect_uri
          if (back !== undefined && !Option.exists(client, (found) => found.post_logout_redirect_uris.includes(back)))
            return signOutRefused("The app's return address is not registered.")
          const sameUser = Option.isSome(session) && hint !== undefined && hint.sub === session.value.user_id
          if (Option.isSome(session) && !sameUser && !confirmed) {
            const fields = { ...params, csrf: yield* csrf.issue(cookie ?? "") }
            const hidden = Object.entries(fields)
              .filter(([name, value]) => value !== undefined && name !== "confirm")
              .map(
                ([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value ?? "")}">`
              )
              .join("")
            return plainPage(
              200,
              places.product,
              `Sign out of ${places.product}?`,
              `<form method="post" action="${escapeHtml(`${places.base}${paths.endSession}`)}">${hidden}<button type="submit" name="confirm" value="yes">Sign out</button></form>`
            )
          }
          if (Option.isSome(session) && !sameUser) {
            // The form's field is the CSRF token of this browser's session: a MAC of its cookie.
            const bound = params.csrf ?? ""
            if (!csrf.verify({ header: bound, cookie: bound, refreshToken: cookie ?? "" }))
              return signOutRefused("Start again from the app.", 403)
          }
          yield* browser.end(cookie)
          const done =
            back === undefined
              ? plainPage(
                  200,
                  places.product,
                  "You are signed out",
                  `<p>You have signed out of ${escapeHtml(places.product)}.</p>`
                )
              : HttpServerResponse.redirect(
                  params.state === undefined ? back : withParameters(back, { state: params.state }),
                  { status: 303 }
                )
          return withoutSessionCookies(done, places)
        }).pipe(Effect.catchTag("StoreUnavailableError", () => Effect.succeed(storeDown)))

      yield* router.get(
        paths.endSession as `/${string}`,
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
          endSession(firstValues(queryOf(request)), false)
        )
      )
      yield* router.post(
        paths.endSession as `/${string}`,
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const form = yield* formOf(request)
          if (form === undefined) return notAForm
          return yield* endSession(form, form.confirm === "yes")
        })
      )
    })
  )
