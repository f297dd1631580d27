import * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Context, Duration, Effect, Layer, Option } from "effect"
import { CsrfTokens } from "../../application/ports/CsrfTokens.js"
import type { CookieSettings } from "../../config/sections/cookies.js"
import { TokenError } from "../../domain/errors.js"
import type { TokenPair } from "../../domain/Token.js"
import { CsrfError } from "./errors.js"

/** The HttpOnly cookie that carries the refresh token in cookie mode. */
export const REFRESH_COOKIE = "portcullis_refresh"
/** The readable cookie a page echoes in the CSRF header. */
export const CSRF_COOKIE = "portcullis_csrf"
/** The header (lower-case, as Node hands headers over) that must echo the CSRF cookie. */
export const CSRF_HEADER = "x-csrf-token"

/** The settings that decide how tokens travel. */
export interface TransportOptions extends CookieSettings {
  readonly authPrefix: string
  /** The cookies live as long as the refresh token they carry. */
  readonly refreshTokenExpireDays: number
}

/** Why a refresh token presented from the cookie is dead, so the cookies can go with it. */
const deadTokenTags = new Set(["TokenError", "TokenExpiredError", "TokenBlacklistedError"])
const isDeadToken = (error: unknown) =>
  typeof error === "object" && error !== null && "_tag" in error && deadTokenTags.has(String(error._tag))

const refreshTokenRequired = new TokenError({
  message: "A refresh token is required: refresh_token in the body, or the refresh cookie in cookie mode."
})

/**
 * How a session's tokens reach the client and come back: in the body (bearer mode), or with the
 * refresh token in an HttpOnly cookie guarded by a signed double-submit CSRF token (cookie mode).
 * Every route that starts a session (login, and OAuth or passkey sign-in) hands its pair to
 * `deliver`.
 */
export class SessionTransport extends Context.Tag("http/SessionTransport")<
  SessionTransport,
  {
    /** The pair as the client receives it; in cookie mode the refresh token leaves the body for the cookies. */
    readonly deliver: <P extends TokenPair>(pair: P) => Effect.Effect<P>
    /**
     * Rotates the refresh token the request presents. Cookie mode: the cookie wins over the body,
     * and relying on it requires the CSRF header; bearer mode: the body, cookies ignored.
     */
    readonly refresh: <E>(
      request: HttpServerRequest.HttpServerRequest,
      bodyToken: string | undefined,
      rotate: (refreshToken: string) => Effect.Effect<TokenPair, E>
    ) => Effect.Effect<TokenPair, E | CsrfError | TokenError>
    /** Clears both cookies (cookie mode): the session they carried has ended. */
    readonly clear: Effect.Effect<void>
  }
>() {
  static readonly layer = (options: TransportOptions) =>
    Layer.effect(
      SessionTransport,
      options.tokenTransport === "bearer" ? Effect.succeed(bearer) : cookieTransport(options)
    )
}

const bearer: SessionTransport["Type"] = {
  deliver: Effect.succeed,
  refresh: (_request, bodyToken, rotate) => (bodyToken === undefined ? refreshTokenRequired : rotate(bodyToken)),
  clear: Effect.void
}

const cookieTransport = (options: TransportOptions) =>
  Effect.gen(function* () {
    const csrf = yield* CsrfTokens
    const shared = {
      secure: options.cookieSecure,
      sameSite: options.cookieSameSite,
      ...Option.match(options.cookieDomain, { onNone: () => ({}), onSome: (domain) => ({ domain }) })
    }
    // The refresh cookie goes only to the auth routes; the CSRF cookie must be readable by the
    // application's pages, wherever they live on the cookie's domain.
    const refreshCookie = { ...shared, httpOnly: true, path: options.authPrefix === "" ? "/" : options.authPrefix }
    const csrfCookie = { ...shared, httpOnly: false, path: "/" }
    const lifetime = { maxAge: Duration.days(options.refreshTokenExpireDays) }

    const deliver = <P extends TokenPair>(pair: P): Effect.Effect<P> => {
      const refreshToken = pair.refresh_token
      if (refreshToken === null) return Effect.succeed(pair)
      return Effect.gen(function* () {
        const token = yield* csrf.issue(refreshToken)
        yield* HttpApp.appendPreResponseHandler((_request, response) =>
          HttpServerResponse.setCookies(response, [
            [REFRESH_COOKIE, refreshToken, { ...refreshCookie, ...lifetime }],
            [CSRF_COOKIE, token, { ...csrfCookie, ...lifetime }]
          ]).pipe(
            // Also in a header, for a page on another site that cannot read the cookie; CORS
            // lets only the allowed origins read it.
            Effect.map(HttpServerResponse.setHeader(CSRF_HEADER, token)),
            Effect.orDie
          )
        )
        return { ...pair, refresh_token: null }
      })
    }

    const clear = HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(
        response.pipe(
          HttpServerResponse.expireCookie(REFRESH_COOKIE, refreshCookie),
          HttpServerResponse.expireCookie(CSRF_COOKIE, csrfCookie)
        )
      )
    )

    const refresh = <E>(
      request: HttpServerRequest.HttpServerRequest,
      bodyToken: string | undefined,
      rotate: (refreshToken: string) => Effect.Effect<TokenPair, E>
    ): Effect.Effect<TokenPair, E | CsrfError | TokenError> => {
      const fromCookie = request.cookies[REFRESH_COOKIE]
      if (fromCookie === undefined || fromCookie === "") {
        // A token in the body proves possession by itself: no cookie was relied on.
        return bodyToken === undefined ? refreshTokenRequired : Effect.flatMap(rotate(bodyToken), deliver)
      }
      const header = request.headers[CSRF_HEADER]
      if (header === undefined || header === "") {
        return new CsrfError({ message: "The X-CSRF-Token header is required when the refresh cookie is used." })
      }
      const cookie = request.cookies[CSRF_COOKIE] ?? ""
      if (!csrf.verify({ header, cookie, refreshToken: fromCookie })) {
        return new CsrfError({
          message: "The X-CSRF-Token header does not match a valid CSRF cookie for this session."
        })
      }
      return rotate(fromCookie).pipe(
        Effect.tapError((error) => (isDeadToken(error) ? clear : Effect.void)),
        Effect.flatMap(deliver)
      )
    }

    return { deliver, refresh, clear } satisfies SessionTransport["Type"]
  })
