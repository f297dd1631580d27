import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import { problemContentType } from "./problems.js"
import type { Step } from "./step.js"

/** OAuth's error codes for the statuses the pipeline refuses with (RFC 6749 §5.2, RFC 6750 §3.1). */
const codeOf = (status: number) => {
  if (status === 429 || status === 503) return "temporarily_unavailable"
  if (status >= 500) return "server_error"
  if (status === 403) return "access_denied"
  return "invalid_request"
}

/** An OAuth error answer (RFC 6749 §5.2), never cached. */
export const oauthError = (
  status: number,
  error: string,
  error_description: string,
  headers: Readonly<Record<string, string>> = {}
) =>
  HttpServerResponse.unsafeJson(
    { error, error_description },
    { status, headers: { "cache-control": "no-store", pragma: "no-cache", ...headers } }
  )

const detailOf = (response: HttpServerResponse.HttpServerResponse) => {
  if (response.body._tag !== "Uint8Array") return "The request was refused."
  try {
    const body: unknown = JSON.parse(new TextDecoder().decode(response.body.body))
    const detail = typeof body === "object" && body !== null && "detail" in body ? body.detail : undefined
    return typeof detail === "string" ? detail : "The request was refused."
  } catch {
    return "The request was refused."
  }
}

const openHeaders = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": "WWW-Authenticate, Retry-After, X-Request-Id",
  vary: "Origin"
}

/**
 * The provider's protocol routes answer in OAuth's own shapes: a refusal made by any step of the
 * pipeline (a rate limit, an oversized body, the Origin check, a failure) reaches the client as
 * `{error, error_description}` with its status and headers, never as problem+json. The routes any
 * page may call (token, revoke, introspect: `oauth-open`) answer CORS `*` without credentials,
 * their preflights here, before anything counts them. It stands right after the response headers.
 */
export const oauthAnswers: Step = (next) => (routed) => {
  const kind = routed.route.kind
  if (kind !== "oauth" && kind !== "oauth-open") return next(routed)
  const open = kind === "oauth-open"
  const { request } = routed
  if (open && request.method === "OPTIONS" && request.headers["access-control-request-method"] !== undefined) {
    return Effect.succeed(
      HttpServerResponse.empty({
        status: 204,
        headers: {
          "access-control-allow-origin": "*",
          "access-control-allow-methods": "POST",
          "access-control-allow-headers": "Authorization, Content-Type",
          "access-control-max-age": "600"
        }
      })
    )
  }
  return Effect.map(next(routed), (response) => {
    // Every problem is made by `respond` (middleware.ts), its type on the body.
    const shaped =
      response.body._tag === "Uint8Array" && response.body.contentType === problemContentType
        ? HttpServerResponse.setHeaders(
            oauthError(response.status, codeOf(response.status), detailOf(response)),
            withoutBodyHeaders(response.headers)
          )
        : response
    return open ? HttpServerResponse.setHeaders(shaped, openHeaders) : shaped
  })
}

const withoutBodyHeaders = (headers: Readonly<Record<string, string>>) => {
  const { "content-type": _type, "content-length": _length, ...rest } = headers
  return rest
}
