import * as HttpApp from "@effect/platform/HttpApp"
import { Effect, Layer, Option, Redacted, Schema } from "effect"
import { EmailSignIn } from "../../../../application/EmailSignIn.js"
import { OAuthSignIn } from "../../../../application/OAuthSignIn.js"
import { Apps } from "../../../../application/oidc/Apps.js"
import { Authorize, type AuthorizeOutcome } from "../../../../application/oidc/Authorize.js"
import { BrowserSessions } from "../../../../application/oidc/BrowserSessions.js"
import { Passkeys } from "../../../../application/Passkeys.js"
import { PasswordSignIn } from "../../../../application/PasswordSignIn.js"
import { CsrfTokens } from "../../../../application/ports/CsrfTokens.js"
import { oauthProviders } from "../../../../config/oauthProviders.js"
import { AuthenticationError, AuthorizationRequestGoneError, ValidationError } from "../../../../domain/errors.js"
import { amrOf, type SignInMethod } from "../../../../domain/oidc/Claims.js"
import type { ClientInfo } from "../../../../domain/Session.js"
import type { LoginResponse } from "../../../../domain/Token.js"
import { CurrentPrincipal } from "../../Authentication.js"
import { clientInfo } from "../../clientInfo.js"
import { CSRF_HEADER } from "../../cookies.js"
import { CsrfError } from "../../errors.js"
import { feature, featureApi, limitedRoutes, shapeOf } from "../../Feature.js"
import { SESSION_CSRF_COOKIE, sessionCookie, withSessionCookies } from "./browser.js"
import { oidcGroup, PasskeySignIn, ProviderCallbackSignIn, type ProviderSignIn } from "./group.js"
import { pageRoutes } from "./pageRoutes.js"
import {
  locationOf,
  type ProviderPlaces,
  protocolLimits,
  providerPagePolicies,
  providerPaths,
  providerRouteKinds
} from "./places.js"
import { protocolRoutes } from "./protocol.js"

const gone = new AuthorizationRequestGoneError()
// The email-sign-in feature's answer, in words of its own: a feature imports no other feature.
const mailSent = { detail: "If the address can sign in, a mail with a link and a code is on its way." }
const isPasskeySignIn = Schema.is(PasskeySignIn)
const isProviderCallback = Schema.is(ProviderCallbackSignIn)

/**
 * The OpenID Provider (OIDC_PROVIDER_ENABLED): its protocol routes beside the API, and its JSON
 * routes (the browser session's sign-in, the consent answer, the user's apps) in the API.
 */
export const oidc = feature({
  name: "oidc",
  limits: [...limitedRoutes(oidcGroup), ...protocolLimits],
  enabled: (settings) => settings.oidc.providerEnabled,
  api: (context) => {
    const { settings } = context
    const base = settings.server.publicUrl.href.replace(/\/+$/, "")
    const signInUrl = `${base}${providerPaths({ authPrefix: settings.server.authPrefix, issuer: settings.oidc.issuer }).signIn}`
    const places: ProviderPlaces = {
      issuer: settings.oidc.issuer,
      base,
      product: settings.server.productName,
      authPrefix: settings.server.authPrefix,
      secure: settings.server.publicUrl.protocol === "https:",
      maxAgeSeconds: settings.tokens.refreshTokenExpireDays * 86_400,
      dynamicRegistration: settings.oidc.dynamicRegistration,
      metadataDocuments: settings.oidc.clientMetadataDocuments,
      registerLimit: settings.limits.authRateLimitEnabled ? settings.limits.authRateLimits.oidc_register : undefined,
      pages: settings.server.hostedPages
        ? {
            product: settings.server.productName,
            loginField: settings.accounts.loginField,
            emailSignIn: settings.accounts.emailSignInEnabled,
            passkeys: settings.passkeys.passkeyEnabled,
            // A provider returns only to a redirect URI registered with it: the page offers those that list it.
            providers: oauthProviders(settings, context.deployment)
              .filter((provider) => provider.redirectUris.includes(signInUrl))
              .map((provider) => provider.name),
            signInUrl,
            logoUrl: Option.getOrUndefined(Option.map(settings.server.logoUrl, (url) => url.href))
          }
        : undefined
    }
    const paths = providerPaths(places)
    /** Where the browser goes next; an outcome with nowhere to go means the request cannot go on. */
    const continueTo = (outcome: AuthorizeOutcome) => {
      const location = locationOf(places, outcome)
      return location === undefined ? Effect.fail(gone) : Effect.succeed({ continue: location })
    }
    const part = featureApi(oidcGroup(shapeOf(context), settings.accounts.emailSignUpEnabled), (handlers) =>
      Effect.gen(function* () {
        const authorize = yield* Authorize
        const browser = yield* BrowserSessions
        const apps = yield* Apps
        const password = yield* PasswordSignIn
        const mailed = yield* EmailSignIn
        const passkeys = yield* Passkeys
        const social = yield* OAuthSignIn
        const csrf = yield* CsrfTokens
        const loginField = settings.accounts.loginField
        const withAmr = (method: SignInMethod) => (login: LoginResponse) => ({ login, amr: amrOf(method) })
        // PASSKEY_REQUIRE_USER_VERIFICATION: an assertion was accepted only with the user verified.
        const passkey: SignInMethod = {
          kind: "passkey",
          userVerified: settings.passkeys.passkeyRequireUserVerification
        }
        /** The sign-in the body asks for, under that sign-in's own rules, and how it proved the user (RFC 8176). */
        const signIn = (payload: ProviderSignIn, client: ClientInfo) => {
          if (isPasskeySignIn(payload))
            return Effect.map(
              passkeys.authenticateComplete(
                { challenge_key: payload.challenge_key, credential: payload.credential },
                client
              ),
              withAmr(passkey)
            )
          if (isProviderCallback(payload))
            return Effect.map(
              social.signIn(
                payload.provider,
                { code: payload.code, state: payload.state, binding: payload.binding },
                client
              ),
              withAmr({ kind: "provider" })
            )
          const identifier = payload[loginField]
          if (payload.password !== undefined && identifier !== undefined)
            return Effect.map(
              password.login(identifier, Redacted.make(payload.password), client),
              withAmr({ kind: "password" })
            )
          if (payload.token !== undefined)
            return Effect.map(mailed.confirmLink(payload.token, client), withAmr({ kind: "mailed" }))
          if (payload.code !== undefined && payload.email !== undefined)
            return Effect.map(mailed.confirmCode(payload.email, payload.code, client), withAmr({ kind: "mailed" }))
          return Effect.fail(new AuthenticationError())
        }
        return handlers
          .handle("session", ({ payload, request }) =>
            Effect.gen(function* () {
              // The request must be waiting before anyone is signed in for it.
              yield* authorize.consentPrompt(payload.request)
              const { login, amr } = yield* signIn(payload, clientInfo(request))
              const { cookie, session } = yield* browser.start(login.access_token, amr)
              const token = yield* csrf.issue(cookie)
              yield* HttpApp.appendPreResponseHandler((_request, response) =>
                withSessionCookies(response, places, cookie, token)
              )
              return yield* continueTo(yield* authorize.resume(payload.request, session))
            }).pipe(Effect.catchTag("ParkedRequestGone", () => Effect.fail(gone)))
          )
          .handle("mail", ({ payload }) =>
            Effect.gen(function* () {
              if (!settings.accounts.emailSignInEnabled)
                return yield* new ValidationError({ message: "Sign-in by mail is off here.", errors: [] })
              // Only a waiting request is named in a mail: a link that could not resume it would be a dead end.
              yield* authorize.consentPrompt(payload.request)
              yield* mailed.request(payload.email, {}, payload.request)
              return mailSent
            }).pipe(Effect.catchTag("ParkedRequestGone", () => Effect.fail(gone)))
          )
          .handle("consent", ({ payload, request }) =>
            Effect.gen(function* () {
              const cookie = sessionCookie(request)
              const session = yield* browser.find(cookie)
              if (Option.isNone(session)) return yield* new AuthenticationError()
              const header = request.headers[CSRF_HEADER] ?? ""
              const bound = csrf.verify({
                header,
                cookie: request.cookies[SESSION_CSRF_COOKIE] ?? "",
                refreshToken: cookie ?? ""
              })
              if (!bound)
                return yield* new CsrfError({
                  message: "The X-CSRF-Token header must equal the portcullis_op_csrf cookie of this browser's session."
                })
              return yield* continueTo(yield* authorize.answerConsent(payload.request, session.value, payload.approve))
            }).pipe(Effect.catchTag("ParkedRequestGone", () => Effect.fail(gone)))
          )
          .handle("apps", () =>
            Effect.flatMap(CurrentPrincipal, (principal) => apps.list(principal.user.id)).pipe(
              Effect.map((listed) => listed.map((app) => ({ ...app, scopes: [...app.scopes] })))
            )
          )
          .handle("withdraw", ({ path }) =>
            Effect.flatMap(CurrentPrincipal, (principal) => apps.withdraw(principal.user.id, path.client_id)).pipe(
              Effect.asVoid
            )
          )
      })
    )
    return {
      group: part.group,
      handlers: Layer.mergeAll(part.handlers, protocolRoutes(places), pageRoutes(places)),
      kinds: providerRouteKinds(paths),
      policies: providerPagePolicies(paths, places.pages?.logoUrl)
    }
  }
})
