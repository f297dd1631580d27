import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import { escapeHtml } from "../../../../domain/Text.js"

/** The provider's browser session: HttpOnly, sent to the provider's routes only. */
export const SESSION_COOKIE = "portcullis_op"
/** Readable by the consent page, which echoes it in X-CSRF-Token. */
export const SESSION_CSRF_COOKIE = "portcullis_op_csrf"

export interface BrowserOptions {
  /** The auth prefix: the cookies' path is the provider's routes under it. */
  readonly authPrefix: string
  /** PUBLIC_URL is https: the cookies are Secure. */
  readonly secure: boolean
  /** How long the cookies live: as long as the session they name. */
  readonly maxAgeSeconds: number
}

const cookieOptions = (options: BrowserOptions, httpOnly: boolean) => ({
  path: `${options.authPrefix}/oauth2`,
  httpOnly,
  secure: options.secure,
  sameSite: "lax" as const
})

/** The session cookie and its CSRF companion, set on `response`. */
export const withSessionCookies = (
  response: HttpServerResponse.HttpServerResponse,
  options: BrowserOptions,
  session: string,
  csrf: string
) =>
  HttpServerResponse.setCookies(response, [
    [SESSION_COOKIE, session, { ...cookieOptions(options, true), maxAge: `${options.maxAgeSeconds} seconds` }],
    [SESSION_CSRF_COOKIE, csrf, { ...cookieOptions(options, false), maxAge: `${options.maxAgeSeconds} seconds` }]
  ]).pipe(Effect.orDie)

/** Both cookies expired, on `response`. */
export const withoutSessionCookies = (response: HttpServerResponse.HttpServerResponse, options: BrowserOptions) =>
  response.pipe(
    HttpServerResponse.expireCookie(SESSION_COOKIE, cookieOptions(options, true)),
    HttpServerResponse.expireCookie(SESSION_CSRF_COOKIE, cookieOptions(options, false))
  )

/** The session cookie of a request, if any. */
export const sessionCookie = (request: HttpServerRequest.HttpServerRequest) => request.cookies[SESSION_COOKIE]

/** The first value of each parameter of a query or form. */
export const firstValues = (params: URLSearchParams): Record<string, string | undefined> => {
  const values: Record<string, string> = {}
  for (const [name, value] of params) if (!Object.hasOwn(values, name)) values[name] = value
  return values
}

/** The query of a request's target, as sent. */
export const queryOf = (request: HttpServerRequest.HttpServerRequest) => {
  const at = request.url.indexOf("?")
  return new URLSearchParams(at === -1 ? "" : request.url.slice(at + 1).split("#")[0])
}

/** A small page of the provider's (an error, a sign-out), no script, its status given. */
export const plainPage = (status: number, product: string, title: string, body: string) =>
  HttpServerResponse.text(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)} · ${escapeHtml(product)}</title></head><body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`,
    { status, contentType: "text/html; charset=utf-8" }
  )
